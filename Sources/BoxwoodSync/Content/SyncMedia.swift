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
public struct SyncMediaImage: Media, PostboxCodable, Equatable {
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

    /// The size closest to `width` from above (or the largest), for a thumbnail or a full view.
    public func size(fitting width: Int32) -> Size? {
        sizes.filter { $0.width >= width }.min { $0.width < $1.width } ?? sizes.max { $0.width < $1.width }
    }
}

/// A file: a document, a voice note, a video; shared like a photo.
public struct SyncMediaFile: Media, PostboxCodable, Equatable {
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
}

/// A link preview; shared by every message with the same link.
public struct SyncMediaWebPage: Media, PostboxCodable, Equatable {
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
}

/// Media of a kind this client does not know, kept as a placeholder ("update the app to see this") so that the
/// message is never lost and shows that something is there. Stored with its message (no id).
public struct SyncMediaUnsupported: Media, PostboxCodable, Equatable {
    public static let postboxTypeName = "SyncMediaUnsupported"

    public let kind: String

    public init(kind: String) { self.kind = kind }

    public var id: MediaId? { nil }
}
