#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read failure on stdin; carries errno.
struct InputError: Error {
    let code: Int32
    var message: String { "reading stdin failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Reads a file descriptor (stdin by default) to its end, in 1 MiB `read(2)` calls; presized when it is a
/// regular file. For values of any size that fits in memory.
func readAllInput(_ fd: Int32 = 0) throws(InputError) -> [UInt8] {
    var bytes: [UInt8] = []
    var info = stat()
    if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 {
        bytes.reserveCapacity(Int(info.st_size))
    }
    let chunk = 1 << 20
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        let n = read(fd, buffer, chunk)
        if n < 0 {
            if errno == EINTR { continue }
            throw InputError(code: errno)
        }
        if n == 0 { return bytes }
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: n))
    }
}
