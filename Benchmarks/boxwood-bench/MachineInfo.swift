import BoxwoodStore
import CLMDB
import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the numbers depend on: CPU, cores, memory, kernel, the file system of the bench directory, the build and
/// the library versions. Linux sources (/proc); "unknown" where they are missing.
struct MachineInfo {
    let lines: [String]

    init(benchDirectory: String) {
        let cpu = MachineInfo.field("model name", in: "/proc/cpuinfo") ?? "unknown CPU"
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let memory = MachineInfo.field("MemTotal", in: "/proc/meminfo")
            .flatMap { Int($0.split(separator: " ").first ?? "") }
            .map { formatBytes($0 * 1024) } ?? "unknown"
        #if DEBUG
        let build = "debug (numbers are not meaningful)"
        #else
        let build = "release"
        #endif
        lines = [
            "machine: \(cpu), \(cores) cores, \(memory) RAM, \(MachineInfo.kernel())",
            "bench directory: \(benchDirectory) (\(MachineInfo.fileSystem(of: benchDirectory)))",
            "build: \(build); sqlite \(String(cString: sqlite3_libversion())), \(String(cString: mdb_version(nil, nil, nil))), boxwood format \(ValueBox.formatVersion)",
        ]
    }

    /// The value of the first `name: value` line of a /proc file.
    private static func field(_ name: String, in path: String) -> String? {
        guard let content = readFile(path) else { return nil }
        for line in String(decoding: content, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 && trimmed(parts[0]) == name { return trimmed(parts[1]) }
        }
        return nil
    }

    private static func kernel() -> String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown kernel" }
        func text<T>(_ field: inout T) -> String {
            withUnsafePointer(to: &field) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
        }
        return "\(text(&names.sysname)) \(text(&names.release)) \(text(&names.machine))"
    }

    /// The type and device of the mount holding `path` (the longest mount point that contains it).
    private static func fileSystem(of path: String) -> String {
        guard let resolved = realpath(path, nil) else { return "unknown file system" }
        let absolute = String(cString: resolved)
        free(resolved)
        guard let mounts = readFile("/proc/self/mounts") else { return "unknown file system" }
        var best: (point: String, type: String, device: String)?
        for line in String(decoding: mounts, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1])
            let contains = point == "/" || absolute == point || absolute.hasPrefix(point + "/")
            if contains && point.count >= (best?.point.count ?? -1) {
                best = (point, String(fields[2]), String(fields[0]))
            }
        }
        guard let best else { return "unknown file system" }
        return "\(best.type) on \(best.device), mounted at \(best.point)"
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
