import BoxwoodStore
/// The keys of the full-text engine tables (layouts in `docs/full-text-index.md`). Document ids are 8-byte
/// big-endian integers, so keys that share a prefix sort by document id. A posting list (postings, tags,
/// collections) is the blocks under one list prefix, keyed `list prefix ‖ first docId` (`FullTextPostingBlock`).
enum FullTextKeys {
    /// The longest collection id accepted, in UTF-8 bytes (its key adds a 2-byte length and a document id).
    static let maxCollectionBytes = ValueBox.maxKeySize - 10

    /// `documents` key: the document id.
    static func document(_ docId: UInt64) -> ValueBoxKey {
        var key = ValueBoxKey(length: 8)
        key.setUInt64(0, value: docId)
        return key
    }

    /// `postings`/`tags` list prefix of one token: `token ‖ 0x00` (exact) or `token` (prefix search: the lists of
    /// every token starting with it).
    static func tokenPrefix(_ token: [UInt8], exact: Bool) -> [UInt8] {
        exact ? token + [0] : token
    }

    /// `collections` list prefix: `u16 big-endian length ‖ collectionId`.
    static func collectionPrefix(_ collection: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: collection.count >> 8), UInt8(truncatingIfNeeded: collection.count)] + collection
    }

    /// The document id in the last 8 bytes of a key (0 for a key shorter than 8 bytes).
    @inline(__always)
    static func docId(atEndOf key: UnsafeRawBufferPointer) -> UInt64 {
        guard key.count >= 8 else { return 0 }
        return UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
    }

    /// The exclusive bounds that enclose every key starting with `prefix` (keys are never equal to a prefix,
    /// and no key byte right after a prefix is 0xFF: UTF-8 never has one, docIds are never that large).
    static func bounds(of prefix: [UInt8]) -> (start: ValueBoxKey, end: ValueBoxKey) {
        (ValueBoxKey(prefix), ValueBoxKey(prefix + [UInt8](repeating: 0xFF, count: 9)))
    }
}
