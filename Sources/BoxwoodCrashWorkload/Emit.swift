#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `text` to a file descriptor with `write(2)` (no stdio buffering, so a SIGKILL loses nothing
/// already reported). Used by the test child processes; exits with status 4 if the descriptor is gone.
public func emit(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { exit(4) }
        offset += n
    }
}
