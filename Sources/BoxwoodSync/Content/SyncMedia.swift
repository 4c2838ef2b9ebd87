import Boxwood

/// The media namespaces of synced media (``MediaId/namespace``): a photo, a file and a web page with the same server
/// id are different media.
public enum SyncMediaNamespaces {
    public static let photo = MediaId.Namespace(1)
    public static let file = MediaId.Namespace(2)
    public static let webPage = MediaId.Namespace(3)
}

/// A reference to the bytes of a media item in the app's local media cache (Telegram's `MediaResource` id): the
/// cache's key, not a path. The same size of the same photo always has the same id, so every message sharing the
/// photo finds one download.
public struct SyncMediaResourceId: Hashable, Sendable, Codable, CustomStringConvertible {
    public let key: String

    public init(_ key: String) { self.key = key }

    public var description: String { key }
}

/// A photo with its sizes; shared between the messages that carry it (its ``id`` is the server's photo id).
///
/// Stored as the Int64 field `"photoId"` and the sizes as parallel arrays of one length: `"st"` the types and `"sr"`
/// the resource keys (strings), `"sw"`, `"sh"`, `"sb"` the widths, heights and byte counts (Int32 arrays). A value
/// written by builds before this form (the Codable bridge's field `"sizes"`, an array of objects) still reads.
public struct SyncMediaImage: Media, Codable, Equatable {
    public static let postboxTypeName = "SyncMediaImage"

    /// One stored size and where its bytes are cached.
    public struct Size: Hashable, Sendable, Codable {
        public let type: String
        public let width: Int32
        public let height: Int32
        public let byteCount: Int32
        public let resource: SyncMediaResourceId
    }

    public let photoId: Int64
    public let sizes: [Size]

    public var id: MediaId? { MediaId(namespace: SyncMediaNamespaces.photo, id: photoId) }

    public init(_ photo: ApiPhoto) {
        photoId = photo.id
        sizes = photo.sizes.map {
            Size(type: $0.type, width: $0.width, height: $0.height, byteCount: $0.byteCount,
                 resource: SyncMediaResourceId("photo:\(photo.id):\($0.type)"))
        }
    }

    /// The Codable bridge's field, in values written before the compact form.
    static let legacySizesKey = "sizes"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        photoId = try decoder.decodeInt64(forKey: "photoId")
        if decoder.containsKey(Self.legacySizesKey) {
            sizes = try decoder.decodeCodable([Size].self, forKey: Self.legacySizesKey) ?? []
            return
        }
        let types = decoder.decodeStringArrayForKey("st")
        let widths = decoder.decodeInt32ArrayForKey("sw")
        let heights = decoder.decodeInt32ArrayForKey("sh")
        let byteCounts = decoder.decodeInt32ArrayForKey("sb")
        let resources = decoder.decodeStringArrayForKey("sr")
        guard [widths.count, heights.count, byteCounts.count, resources.count].allSatisfy({ $0 == types.count }) else {
            throw .invalidValue(key: "st", reason: "the size arrays differ in length")
        }
        sizes = types.indices.map {
            Size(type: types[$0], width: widths[$0], height: heights[$0], byteCount: byteCounts[$0], resource: SyncMediaResourceId(resources[$0]))
        }
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(photoId, forKey: "photoId")
        encoder.encodeStringArray(sizes.map(\.type), forKey: "st")
        encoder.encodeInt32Array(sizes.map(\.width), forKey: "sw")
        encoder.encodeInt32Array(sizes.map(\.height), forKey: "sh")
        encoder.encodeInt32Array(sizes.map(\.byteCount), forKey: "sb")
        encoder.encodeStringArray(sizes.map(\.resource.key), forKey: "sr")
    }

    /// The size closest to `width` from above (or the largest), for a thumbnail or a full view.
    public func size(fitting width: Int32) -> Size? {
        sizes.filter { $0.width >= width }.min { $0.width < $1.width } ?? sizes.max { $0.width < $1.width }
    }
}

/// A file: a document, a voice note, a video; shared like a photo.
///
/// Fields `"fileId"` (Int64), `"mimeType"` (string), `"size"` (Int64), `"fileName"` (string) and `"duration"`
/// (Int32), the last two left out when nil, and the resource key as the string `"rk"`. Builds before this form
/// (the Codable bridge) wrote the same scalar fields and the resource as an object `"resource"` with the string field
/// `"key"`; that still reads.
public struct SyncMediaFile: Media, Codable, Equatable {
    public static let postboxTypeName = "SyncMediaFile"

    public let fileId: Int64
    public let mimeType: String
    public let size: Int64
    public let fileName: String?
    public let duration: Int32?
    public let resource: SyncMediaResourceId

    public var id: MediaId? { MediaId(namespace: SyncMediaNamespaces.file, id: fileId) }

    public init(_ document: ApiDocument) {
        fileId = document.id
        mimeType = document.mimeType
        size = document.size
        fileName = document.fileName
        duration = document.duration
        resource = SyncMediaResourceId("file:\(document.id)")
    }

    /// The Codable bridge's field for the resource, in values written before the compact form.
    static let legacyResourceKey = "resource"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        fileId = try decoder.decodeInt64(forKey: "fileId")
        mimeType = try decoder.decodeString(forKey: "mimeType")
        size = try decoder.decodeInt64(forKey: "size")
        fileName = decoder.decodeOptionalStringForKey("fileName")
        duration = decoder.decodeOptionalInt32ForKey("duration")
        if let key = decoder.decodeOptionalStringForKey("rk") {
            resource = SyncMediaResourceId(key)
        } else if let legacy = try decoder.decodeCodable(SyncMediaResourceId.self, forKey: Self.legacyResourceKey) {
            resource = legacy
        } else {
            throw .missingField(key: "rk")
        }
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(fileId, forKey: "fileId")
        encoder.encodeString(mimeType, forKey: "mimeType")
        encoder.encodeInt64(size, forKey: "size")
        if let fileName { encoder.encodeString(fileName, forKey: "fileName") }
        if let duration { encoder.encodeInt32(duration, forKey: "duration") }
        encoder.encodeString(resource.key, forKey: "rk")
    }
}

/// A link preview; shared by every message with the same link.
///
/// Fields `"webPageId"` (Int64), `"url"`, `"title"` and `"summary"` (strings, the last two left out when nil): the
/// same bytes the Codable bridge wrote before.
public struct SyncMediaWebPage: Media, Codable, Equatable {
    public static let postboxTypeName = "SyncMediaWebPage"

    public let webPageId: Int64
    public let url: String
    public let title: String?
    public let summary: String?

    public var id: MediaId? { MediaId(namespace: SyncMediaNamespaces.webPage, id: webPageId) }

    public init(_ page: ApiWebPage) {
        webPageId = page.id
        url = page.url
        title = page.title
        summary = page.summary
    }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        webPageId = try decoder.decodeInt64(forKey: "webPageId")
        url = try decoder.decodeString(forKey: "url")
        title = decoder.decodeOptionalStringForKey("title")
        summary = decoder.decodeOptionalStringForKey("summary")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(webPageId, forKey: "webPageId")
        encoder.encodeString(url, forKey: "url")
        if let title { encoder.encodeString(title, forKey: "title") }
        if let summary { encoder.encodeString(summary, forKey: "summary") }
    }
}

/// Media of a kind this client does not know, kept as a placeholder ("update the app to see this") so that the
/// message is never lost and shows that something is there. Stored with its message (no id): the string field
/// `"kind"`, the same bytes the Codable bridge wrote before.
public struct SyncMediaUnsupported: Media, Codable, Equatable {
    public static let postboxTypeName = "SyncMediaUnsupported"

    public let kind: String

    public init(kind: String) { self.kind = kind }

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        kind = try decoder.decodeString(forKey: "kind")
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeString(kind, forKey: "kind")
    }

    public var id: MediaId? { nil }
}
