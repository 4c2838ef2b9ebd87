import Boxwood

/// A file to send as a document message, uploaded in parts (tag ``SyncOperationLogTags/sendMessage``, in order
/// with the chat's other sends). `nextPart` is the first part the server has not acknowledged: the entry is
/// rewritten after each acknowledged part, so an upload interrupted by a kill resumes there (the part in flight at
/// the kill is sent again; the server stores a part again harmlessly).
public struct SendMediaOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "SendMediaOperation"

    /// The local copy's random id (its globally unique id), also the server message's.
    public let randomId: Int64
    /// The upload's id on the server (chosen at random when queued).
    public let fileId: Int64
    /// The file to upload: a path the app keeps until the message is sent (in its container; see
    /// ``OutboundQueue/sendMedia(peerId:file:caption:timestamp:)``).
    public let path: String
    public let fileName: String
    public let mimeType: String
    public let size: Int64
    public let partSize: Int32
    public let caption: String
    public let mutation: Int64
    /// The first part not acknowledged yet.
    public let nextPart: Int32

    /// How many parts the file has.
    public var totalParts: Int32 { Int32((size + Int64(partSize) - 1) / Int64(partSize)) }

    public init(randomId: Int64, fileId: Int64, path: String, fileName: String, mimeType: String, size: Int64, partSize: Int32,
                caption: String, mutation: Int64, nextPart: Int32) {
        self.randomId = randomId
        self.fileId = fileId
        self.path = path
        self.fileName = fileName
        self.mimeType = mimeType
        self.size = size
        self.partSize = partSize
        self.caption = caption
        self.mutation = mutation
        self.nextPart = nextPart
    }

    /// This operation with `nextPart` moved to `part`.
    func acknowledged(upTo part: Int32) -> SendMediaOperation {
        SendMediaOperation(randomId: randomId, fileId: fileId, path: path, fileName: fileName, mimeType: mimeType, size: size,
                           partSize: partSize, caption: caption, mutation: mutation, nextPart: part)
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        randomId = try decoder.decodeInt64(forKey: "r")
        fileId = try decoder.decodeInt64(forKey: "f")
        path = decoder.decodeStringForKey("p", orElse: "")
        fileName = decoder.decodeStringForKey("n", orElse: "")
        mimeType = decoder.decodeStringForKey("y", orElse: "application/octet-stream")
        size = try decoder.decodeInt64(forKey: "s")
        partSize = try decoder.decodeInt32(forKey: "z")
        caption = decoder.decodeStringForKey("c", orElse: "")
        mutation = try decoder.decodeInt64(forKey: "m")
        nextPart = try decoder.decodeInt32(forKey: "x")
        // A stored entry is bytes another build or a damaged file may have written: one the upload cannot follow is
        // refused here instead of trapping later.
        guard size > 0, partSize > 0, Int(partSize) <= ApiUploadLimits.maxPartSize, nextPart >= 0 else {
            throw .invalidValue(key: "s", reason: "an upload of \(size) bytes in parts of \(partSize) from part \(nextPart)")
        }
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(randomId, forKey: "r")
        encoder.encodeInt64(fileId, forKey: "f")
        encoder.encodeString(path, forKey: "p")
        encoder.encodeString(fileName, forKey: "n")
        encoder.encodeString(mimeType, forKey: "y")
        encoder.encodeInt64(size, forKey: "s")
        encoder.encodeInt32(partSize, forKey: "z")
        encoder.encodeString(caption, forKey: "c")
        encoder.encodeInt64(mutation, forKey: "m")
        encoder.encodeInt32(nextPart, forKey: "x")
    }
}

/// Messages to forward (tag ``SyncOperationLogTags/sendMessage``, in order with the target chat's other sends): the
/// local copies in the target chat already show them; `randomIds[i]` names the copy of `ids[i]`.
public struct ForwardMessagesOperation: PostboxCoding, Equatable, Sendable {
    public static let postboxTypeName = "ForwardMessagesOperation"

    public let fromPeerId: PeerId
    public let ids: [Int32]
    public let randomIds: [Int64]
    public let mutation: Int64

    public init(fromPeerId: PeerId, ids: [Int32], randomIds: [Int64], mutation: Int64) {
        self.fromPeerId = fromPeerId
        self.ids = ids
        self.randomIds = randomIds
        self.mutation = mutation
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        fromPeerId = PeerId(try decoder.decodeInt64(forKey: "p"))
        ids = decoder.decodeInt32ArrayForKey("i")
        randomIds = decoder.decodeInt64ArrayForKey("r")
        mutation = try decoder.decodeInt64(forKey: "m")
        guard ids.count == randomIds.count else {
            throw .invalidValue(key: "r", reason: "\(ids.count) messages with \(randomIds.count) random ids")
        }
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(fromPeerId.toInt64(), forKey: "p")
        encoder.encodeInt32Array(ids, forKey: "i")
        encoder.encodeInt64Array(randomIds, forKey: "r")
        encoder.encodeInt64(mutation, forKey: "m")
    }
}
