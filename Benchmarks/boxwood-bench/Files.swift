#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Elapsed wall-clock time on CLOCK_MONOTONIC; the harness times whole loops with it.
struct Stopwatch {
    private let start = Stopwatch.now()

    /// Seconds since the stopwatch was created.
    var seconds: Double {
        let now = Stopwatch.now()
        return Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
    }

    private static func now() -> timespec {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time
    }
}

/// Creates a directory (and no parents); an existing one is fine.
func makeDirectory(_ path: String) throws(BenchError) {
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
        throw .io(operation: "mkdir", path: path, errno: errno)
    }
}

/// Creates a fresh `boxwood-bench.XXXXXX` directory inside `parent` and returns its path.
func makeScratchDirectory(in parent: String) throws(BenchError) -> String {
    var template = Array((parent + "/boxwood-bench.XXXXXX").utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buffer in
        mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
    }
    guard let path else { throw .io(operation: "mkdtemp", path: parent, errno: errno) }
    return path
}

/// The names in a directory (without `.` and `..`); empty when it cannot be read.
func directoryEntries(_ path: String) -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) {
            String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Deletes a file or a directory tree; missing paths are fine.
func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
        for name in directoryEntries(path) { removeTree(path + "/" + name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// The size of a file in bytes, or nil when it does not exist.
func fileSize(_ path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int(info.st_size)
}

/// The bytes the files directly inside a directory occupy on disk (allocated blocks, so holes do not count).
func diskUsage(_ directory: String) -> Int {
    var total = 0
    for name in directoryEntries(directory) {
        var info = stat()
        if stat(directory + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG {
            total += Int(info.st_blocks) * 512
        }
    }
    return total
}

/// Writes all of `bytes` to a file descriptor.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(BenchError) {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            throw .io(operation: "write", path: path, errno: errno)
        }
        offset += written
    }
}

/// Makes a file's data durable (`fdatasync`, or `fsync` where there is none).
func syncData(_ fd: Int32, path: String) throws(BenchError) {
    #if os(Linux)
    let result = fdatasync(fd)
    #else
    let result = fsync(fd)
    #endif
    if result != 0 { throw .io(operation: "fdatasync", path: path, errno: errno) }
}

/// The whole content of a file, or nil when it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var content: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count < 0 { return nil }
        if count == 0 { return content }
        content.append(contentsOf: chunk[0..<count])
    }
}

/// Creates (or truncates) a file holding `text`.
func writeTextFile(_ path: String, _ text: String) throws(BenchError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw .io(operation: "create", path: path, errno: errno) }
    defer { close(fd) }
    var text = text
    let failure: BenchError? = text.withUTF8 { utf8 in
        do throws(BenchError) { try writeAll(fd, UnsafeRawBufferPointer(utf8), path: path) } catch { return error }
        return nil
    }
    if let failure { throw failure }
}

/// Flushes stdout, so that rows appear as they are measured and nothing is printed twice after a fork.
func fflushStdout() {
    fflush(nil)
}

/// Writes a line to stderr after flushing stdout.
func printError(_ message: String) {
    fflushStdout()
    var line = "boxwood-bench: " + message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
