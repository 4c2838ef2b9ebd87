import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Facts about the running process that need a system call to learn.
public enum CurrentProcess {
    /// The path of the running executable (symbolic links resolved on Linux; as launched on Darwin).
    public static func executablePath() throws(Errno) -> FilePath {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw Errno(rawValue: errno) }
        return FilePath(String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        #elseif canImport(Darwin)
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var buffer = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&buffer, &size) == 0 else { throw Errno.noSuchFileOrDirectory }
        return FilePath(platformString: buffer)
        #else
        throw Errno.notSupported
        #endif
    }

    /// The executable `name` in the running executable's directory (tools built together find each other so).
    public static func siblingExecutable(_ name: String) throws(Errno) -> FilePath {
        var path = try executablePath()
        path.removeLastComponent()
        path.append(name)
        return path
    }

    /// The most memory the running process has had resident at once so far (its peak resident set size), in
    /// bytes. Linux: `VmHWM` of `/proc/self/status` — the high-water mark of this program's own memory image —
    /// because Linux's `ru_maxrss` survives fork and exec (a child spawned by a 500 MiB test process reports at
    /// least 500 MiB); `getrusage` only when `/proc` cannot be read. Darwin: `getrusage(RUSAGE_SELF).ru_maxrss`, in
    /// bytes there (a spawned process starts a new task, so it is its own).
    public static func peakResidentBytes() throws(Errno) -> UInt64 {
        #if os(Linux)
        if let status = readSmallFile("/proc/self/status"),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ UInt64($0) }) {
            return kilobytes * 1024
        }
        #endif
        #if os(Linux) || os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        var usage = rusage()
        #if os(Linux)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { throw Errno(rawValue: errno) }
        let maxrss = UInt64(max(0, usage.ru_maxrss))
        #if os(Linux)
        return maxrss * 1024
        #else
        return maxrss
        #endif
        #else
        throw Errno.notSupported
        #endif
    }
}
