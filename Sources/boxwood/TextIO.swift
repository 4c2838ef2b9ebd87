#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write failure on stdout (disk full, closed pipe); carries errno.
struct OutputError: Error {
    let code: Int32
    var message: String { "writing to stdout failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Buffered writer to a file descriptor (stdout by default) for large outputs: bytes go into a 1 MiB
/// buffer that is written with `write(2)` when full and by `flush()`.
final class OutputBuffer {
    private let fd: Int32
    private let capacity = 1 << 20
    private let buffer: UnsafeMutablePointer<UInt8>
    private var count = 0
    /// The first write error, if any; later writes are dropped.
    private(set) var error: OutputError?

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    init(fd: Int32 = 1) {
        self.fd = fd
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    @inline(__always)
    private func reserve(_ n: Int) {
        if count + n > capacity { flush() }
    }

    /// Appends the UTF-8 bytes of `s`.
    func write(_ s: String) {
        var s = s
        s.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Appends raw bytes.
    func write(_ raw: UnsafeRawBufferPointer) {
        if raw.count > capacity {
            flush()
            writeAll(raw.baseAddress!, raw.count)
            return
        }
        reserve(raw.count)
        if raw.count > 0 { (buffer + count).update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: raw.count) }
        count += raw.count
    }

    /// Appends one byte.
    @inline(__always)
    func writeByte(_ b: UInt8) {
        reserve(1)
        buffer[count] = b
        count += 1
    }

    /// Appends `raw` as lowercase hex.
    func writeHex(_ raw: UnsafeRawBufferPointer) {
        Self.hexDigits.withUnsafeBufferPointer { d in
            var i = 0
            while i < raw.count {
                let chunk = min(raw.count - i, capacity / 2)
                reserve(chunk * 2)
                var p = buffer + count
                for j in i..<(i + chunk) {
                    let b = raw[j]
                    p[0] = d[Int(b >> 4)]
                    p[1] = d[Int(b & 0x0F)]
                    p += 2
                }
                count += chunk * 2
                i += chunk
            }
        }
    }

    /// Appends a signed decimal integer.
    func writeInt(_ value: Int64) {
        reserve(20)
        if value < 0 { buffer[count] = 45; count += 1 }
        var m = value.magnitude
        let first = count
        repeat {
            buffer[count] = UInt8(truncatingIfNeeded: m % 10) + 48
            m /= 10
            count += 1
        } while m != 0
        var i = first, j = count - 1
        while i < j { let t = buffer[i]; buffer[i] = buffer[j]; buffer[j] = t; i += 1; j -= 1 }
    }

    /// Writes out everything buffered.
    func flush() {
        if count > 0 { writeAll(buffer, count) }
        count = 0
    }

    private func writeAll(_ base: UnsafeRawPointer, _ n: Int) {
        guard error == nil else { return }
        var done = 0
        while done < n {
            let r = systemWrite(fd, base + done, n - done)
            if r < 0 {
                if errno == EINTR { continue }
                error = OutputError(code: errno)
                return
            }
            done += r
        }
    }
}

/// Reads a file descriptor (stdin by default) line by line in 1 MiB chunks. A line is handed out without
/// its `\n`; a final line without `\n` is still a line.
final class LineReader {
    private let fd: Int32
    private var buffer: UnsafeMutableRawPointer
    private var capacity = 1 << 20
    private var start = 0
    private var end = 0
    private var eof = false
    /// The number of the line last returned (1-based).
    private(set) var lineNumber = 0
    /// A read error (errno), if reading failed.
    private(set) var readErrno: Int32? = nil
    /// Bytes read from the file descriptor so far.
    private(set) var bytesRead = 0

    init(fd: Int32 = 0) {
        self.fd = fd
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The bytes left to read when the descriptor is a regular file (stdin redirected from a file), else nil.
    var remainingFileSize: Int? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let position = lseek(fd, 0, SEEK_CUR)
        return position < 0 ? nil : max(0, Int(info.st_size) - Int(position))
    }

    /// Calls `body` with the next line; returns false at end of input (or on a read error).
    func nextLine<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        var searchFrom = start
        while true {
            if searchFrom < end, let nl = memchr(buffer + searchFrom, 0x0A, end - searchFrom) {
                let lineEnd = buffer.distance(to: nl)
                let line = UnsafeRawBufferPointer(start: buffer + start, count: lineEnd - start)
                start = lineEnd + 1
                lineNumber += 1
                return try body(line)
            }
            searchFrom = end
            if eof {
                if start == end { return nil }
                let line = UnsafeRawBufferPointer(start: buffer + start, count: end - start)
                start = end
                lineNumber += 1
                return try body(line)
            }
            // Make room: move the partial line to the front, grow when a single line fills the buffer.
            if start > 0 {
                if end > start { memmove(buffer, buffer + start, end - start) }
                end -= start
                searchFrom -= start
                start = 0
            }
            if end == capacity {
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 16)
                bigger.copyMemory(from: buffer, byteCount: end)
                buffer.deallocate()
                buffer = bigger
                capacity *= 2
            }
            let r = read(fd, buffer + end, capacity - end)
            if r < 0 {
                if errno == EINTR { continue }
                readErrno = errno
                eof = true
            } else if r == 0 {
                eof = true
            } else {
                end += r
                bytesRead += r
            }
        }
    }
}

/// Parsing helpers for the dump format.
enum DumpText {
    static let header = "boxwood-dump 1"

    /// The value of one hex digit, or nil.
    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }

    /// Decodes hex into `out` (replacing its contents); returns an error description on failure.
    static func decodeHex(_ text: UnsafeRawBufferPointer, into out: inout [UInt8]) -> String? {
        out.removeAll(keepingCapacity: true)
        if text.count % 2 != 0 { return "odd number of hex digits (\(text.count))" }
        out.reserveCapacity(text.count / 2)
        var i = 0
        while i < text.count {
            guard let hi = hexValue(text[i]), let lo = hexValue(text[i + 1]) else {
                let bad = hexValue(text[i]) == nil ? text[i] : text[i + 1]
                return "invalid hex digit \(describe(bad))"
            }
            out.append(hi << 4 | lo)
            i += 2
        }
        return nil
    }

    /// Parses a signed decimal integer (an optional `-`, then digits), rejecting overflow.
    static func parseInt64(_ text: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        var negative = false
        if text.count > 0 && text[0] == 45 { negative = true; i = 1 }
        if i == text.count { return nil }
        var magnitude: UInt64 = 0
        while i < text.count {
            let c = text[i]
            guard c >= 48 && c <= 57 else { return nil }
            let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (m2, o2) = m1.addingReportingOverflow(UInt64(c - 48))
            if o1 || o2 { return nil }
            magnitude = m2
            i += 1
        }
        if negative {
            if magnitude > UInt64(Int64.max) + 1 { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return magnitude > UInt64(Int64.max) ? nil : Int64(magnitude)
    }

    /// A printable form of a byte for error messages.
    static func describe(_ b: UInt8) -> String {
        if b >= 0x20 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "0x" + String(b, radix: 16)
    }

    /// A short printable excerpt of a line for error messages.
    static func excerpt(_ line: UnsafeRawBufferPointer) -> String {
        let s = String(decoding: line.prefix(60), as: UTF8.self)
        return line.count > 60 ? s + "…" : s
    }
}

/// `write(2)`, named so that it does not collide with `OutputBuffer.write`.
@inline(__always)
func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, p, n)
    #else
    return Darwin.write(fd, p, n)
    #endif
}
