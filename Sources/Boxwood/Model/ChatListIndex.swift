/// A chat's place in the chat list: whether (and where) it is pinned, and its top message.
///
/// Ordered as Postbox orders it, ascending, with the list shown from the greatest index down: unpinned chats
/// by top message index, then every pinned chat above every unpinned one, pinned chats with a smaller
/// ``pinningIndex`` above those with a larger one.
public struct ChatListIndex: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The position among pinned chats (0 is the top), or nil when not pinned.
    public let pinningIndex: UInt16?
    /// The index of the chat's top message.
    public let messageIndex: MessageIndex

    public init(pinningIndex: UInt16?, messageIndex: MessageIndex) {
        self.pinningIndex = pinningIndex
        self.messageIndex = messageIndex
    }

    public static func < (lhs: ChatListIndex, rhs: ChatListIndex) -> Bool {
        switch (lhs.pinningIndex, rhs.pinningIndex) {
        case let (l?, r?):
            if l != r { return l > r }
        case (nil, _?):
            return true
        case (_?, nil):
            return false
        case (nil, nil):
            break
        }
        return lhs.messageIndex < rhs.messageIndex
    }

    /// The greatest index: pinned first, above any top message.
    public static let absoluteUpperBound = ChatListIndex(pinningIndex: 0, messageIndex: .absoluteUpperBound())
    /// The least index: unpinned, below any top message.
    public static let absoluteLowerBound = ChatListIndex(pinningIndex: nil, messageIndex: .absoluteLowerBound())

    public var description: String {
        if let pinningIndex { return "pinned(\(pinningIndex)) \(messageIndex)" }
        return "\(messageIndex)"
    }
}

extension ChatListIndex: PostboxCoding {
    public static let postboxTypeName = "ChatListIndex"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        if let raw = decoder.decodeOptionalInt32ForKey("pi") {
            guard let pinningIndex = UInt16(exactly: raw) else {
                throw .invalidValue(key: "pi", reason: "pinning index \(raw) is not a UInt16")
            }
            self.pinningIndex = pinningIndex
        } else {
            pinningIndex = nil
        }
        messageIndex = try decoder.decodeObject(forKey: "mi", as: MessageIndex.self)
    }

    public func encode(_ encoder: PostboxEncoder) {
        if let pinningIndex { encoder.encodeInt32(Int32(pinningIndex), forKey: "pi") }
        encoder.encodeObject(messageIndex, forKey: "mi")
    }
}

/// A gap in the chat list: chats whose top message is at or below ``index`` may exist on the server but have
/// not been loaded. Ordered by index.
public struct ChatListHole: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The upper edge of the unloaded part of the list.
    public let index: MessageIndex

    public init(index: MessageIndex) {
        self.index = index
    }

    public static func < (lhs: ChatListHole, rhs: ChatListHole) -> Bool { lhs.index < rhs.index }

    public var description: String { "ChatListHole(\(index))" }
}

extension ChatListHole: PostboxCoding {
    public static let postboxTypeName = "ChatListHole"

    public init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        index = try decoder.decodeObject(forKey: "i", as: MessageIndex.self)
    }

    public func encode(_ encoder: PostboxEncoder) {
        encoder.encodeObject(index, forKey: "i")
    }
}
