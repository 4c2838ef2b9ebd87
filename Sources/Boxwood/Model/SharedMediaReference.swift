/// In a stored message's media list, the place of a media item that the media table (table 6) holds because several
/// messages carry it: `MessageRenderer` puts the media itself there when the message is read. Only the library
/// stores and reads it; a ``Message`` never contains one.
struct SharedMediaReference: Media, Equatable {
    static let postboxTypeName = "Boxwood.SharedMediaReference"

    let mediaId: MediaId

    init(_ mediaId: MediaId) { self.mediaId = mediaId }

    var id: MediaId? { mediaId }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        mediaId = MediaId(namespace: MediaId.Namespace(try decoder.decodeInt32(forKey: "n")), id: try decoder.decodeInt64(forKey: "i"))
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(mediaId.namespace.rawValue, forKey: "n")
        encoder.encodeInt64(mediaId.id, forKey: "i")
    }
}
