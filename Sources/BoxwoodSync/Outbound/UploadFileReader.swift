import BoxwoodPlatform
import SystemPackage

/// Reads the parts of a file to upload, through the platform layer. Every failure is a ``OutboundError``
/// (`fileUnreadable`) naming the path: an upload whose file is gone or changed cannot go on, and the message is
/// flagged failed with that reason.
struct UploadFileReader: ~Copyable {
    private let owned: OwnedDescriptor
    private var descriptor: FileDescriptor { owned.descriptor }
    let path: String

    /// Opens `path` for reading.
    init(path: String) throws(OutboundError) {
        self.path = path
        do {
            owned = OwnedDescriptor(taking: try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]))
        } catch {
            throw .fileUnreadable(path: path, reason: "\(error)")
        }
    }

    /// The file's size in bytes now.
    func size() throws(OutboundError) -> Int64 {
        do {
            return Int64(try descriptor.fileSize())
        } catch {
            throw .fileUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Exactly `count` bytes at `offset` (a shorter file is an error: it changed since it was queued).
    func read(offset: Int64, count: Int) throws(OutboundError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let descriptor = descriptor
        let read: Int
        do {
            read = try bytes.withUnsafeMutableBytes { (buffer) throws(Errno) -> Int in
                try descriptor.readFully(into: buffer.baseAddress!, count: count, offset: UInt64(offset))
            }
        } catch {
            throw .fileUnreadable(path: path, reason: "\(error)")
        }
        guard read == count else {
            throw .fileUnreadable(path: path, reason: "the file ends at \(offset + Int64(read)), before the \(count) bytes at \(offset): it changed since it was queued")
        }
        return bytes
    }
}
