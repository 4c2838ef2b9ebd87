import Boxwood

/// A file uploaded in parts (Telegram's `inputFileBig`): what `sendMedia` names once every part is stored.
public struct ApiInputFile: Hashable, Sendable, Codable {
    /// The upload's id, chosen by the client at random.
    public var id: Int64
    /// How many parts the file has.
    public var parts: Int32
    public var name: String
    public var mimeType: String
    /// The file's size in bytes.
    public var size: Int64

    public init(id: Int64, parts: Int32, name: String, mimeType: String, size: Int64) {
        self.id = id
        self.parts = parts
        self.name = name
        self.mimeType = mimeType
        self.size = size
    }
}

/// The server's limits on uploads (Telegram's for `upload.saveBigFilePart`).
public enum ApiUploadLimits {
    /// The largest part: 512 KiB.
    public static let maxPartSize = 512 * 1024
    /// The most parts of one file (4,000 × 512 KiB: 2,000 MiB).
    public static let maxParts: Int32 = 4_000
}
