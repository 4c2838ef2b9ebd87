import Boxwood
import BoxwoodSync
import BoxwoodStore

/// `postbox-decoder`: arbitrary bytes as an encoded Postbox object, through the public API of the `Boxwood`
/// module: validation, every typed field read, registry and typed object decoding (Boxwood's model types and the
/// sync layer's), and the Codable bridge. The bytes are also decoded in place (`withDecoder(over:)`, no copy), so
/// the sanitizer sees any read past the input. A root object that decodes must re-encode to a fixed point.
enum PostboxDecoderFuzzer {
    static let target = FuzzTarget(
        name: "postbox-decoder",
        summary: "PostboxDecoder on arbitrary bytes: validation, typed reads, object registry, Codable bridge, re-encoding",
        run: { fuzzOne($0) },
        seeds: { seeds() },
        libFuzzerOptions: ["-max_len=8192", "-use_value_profile=1"]
    )

    /// A Codable shape with optionals, nesting, enums with payloads and dictionaries, for the Codable bridge.
    struct CodableSample: Codable, Equatable {
        enum Kind: Codable, Equatable { case a(Int), b(String, [Double]), c }
        var name: String
        var values: [Int32?]
        var nested: [String: [UInt8]]
        var kind: Kind
        var flag: Bool?
    }

    /// Registers every type the harness decodes polymorphically; a refused registration is a bug of the harness.
    static let registered: Void = {
        do {
            try declareEncodable(MessageId.self)
            try declareEncodable(MediaId.self)
            try declareEncodable(MessageIndex.self)
            try declareEncodable(ChatListIndex.self)
            try declareEncodable(ChatListHole.self)
            try declareEncodable(PeerReadState.self)
            try declareEncodable(CombinedPeerReadState.self)
            try declareEncodable(StoreMessageForwardInfo.self)
            try declareEncodable(StoreMessage.self)
            try declareEncodable(CodableEntry.self)
            try SyncClient.registerTypes()
        } catch {
            preconditionFailure("postbox-decoder harness: \(error)")
        }
    }()

    static func fuzzOne(_ bytes: UnsafeRawBufferPointer) {
        _ = registered
        // In place: the decoder reads the fuzzer's own buffer, whose end the sanitizer guards.
        _ = try? PostboxDecoder.withDecoder(over: bytes) { decoder throws(PostboxDecodingError) in
            readEverything(decoder)
        }
        // Through a copy, as values read from a table are decoded.
        guard let decoder = try? PostboxDecoder(bytes: Array(bytes)) else { return }
        readEverything(decoder)
        if let object = try? decoder.decodeRootObject() {
            // Re-encoding what decoded reaches a fixed point after one round.
            let once = encodedRoot(object)
            guard let again = try? PostboxDecoder.decodeRoot(from: MemoryBuffer(once)) else {
                preconditionFailure("\(type(of: object)) decoded from fuzzed bytes does not decode after re-encoding")
            }
            let twice = encodedRoot(again)
            precondition(once == twice, "\(type(of: object)) does not re-encode to the same bytes after a round trip")
        }
        _ = try? PostboxDecoder.decodeRoot(from: MemoryBuffer(Array(bytes)))
        _ = try? CodableEntry(data: Array(bytes)).get(CodableSample.self)
        _ = try? CodableEntry(data: Array(bytes)).get(ApiUpdates.self)
    }

    /// Every read path a buffer that passed validation can reach.
    static func readEverything(_ decoder: PostboxDecoder) {
        for key in decoder.fieldKeys.prefix(64) {
            _ = decoder.containsKey(key)
            _ = decoder.fieldType(forKey: key)
            _ = decoder.decodeOptionalInt32ForKey(key)
            _ = decoder.decodeOptionalInt64ForKey(key)
            _ = decoder.decodeOptionalBoolForKey(key)
            _ = decoder.decodeOptionalDoubleForKey(key)
            _ = decoder.decodeOptionalStringForKey(key)
            _ = decoder.decodeBytesForKey(key)
            _ = decoder.decodeByteArrayForKey(key)
            _ = decoder.decodeOptionalInt32ArrayForKey(key)
            _ = decoder.decodeOptionalInt64ArrayForKey(key)
            _ = decoder.decodeOptionalStringArrayForKey(key)
            _ = decoder.decodeBytesArrayForKey(key)
            _ = try? decoder.decodeObjectForKey(key)
            _ = try? decoder.decodeObjectForKey(key, as: StoreMessage.self)
            _ = try? decoder.decodeObjectForKey(key, as: MessageIndex.self)
            _ = try? decoder.decodeObjectArrayForKey(key, skippingUnknownTypes: true)
            _ = try? decoder.decodeObjectArrayForKey(key, skippingUnknownTypes: false)
            _ = try? decoder.decodeObjectArrayForKey(key, as: PeerReadState.self)
            _ = try? decoder.decodeObjectDictionaryForKey(key, keyType: MediaId.self, valueType: MessageId.self)
            _ = try? decoder.decodeCodable(CodableSample.self, forKey: key)
            _ = try? decoder.decodeCodable([String: Int].self, forKey: key)
            _ = try? decoder.decodeCodable([Int64?].self, forKey: key)
            _ = try? decoder.decodeCodable(ApiUpdates.self, forKey: key)
            _ = try? decoder.decodeCodable(ApiDifference.self, forKey: key)
        }
        _ = try? decoder.decodeRootObject()
        _ = try? decoder.decodeRootObject(as: StoreMessage.self)
        _ = try? decoder.decodeRootObject(as: CombinedPeerReadState.self)
        _ = try? decoder.decodeRootObject(as: ChatListIndex.self)
        _ = try? decoder.decodeRootObject(as: SyncAccountState.self)
        _ = try? decoder.decodeRootObject(as: SyncUser.self)
    }

    /// The root encoding of `value`. Every value the harness encodes is one that decoded (or a fixed seed), so a
    /// failure to encode is a finding.
    static func encodedRoot(_ value: any PostboxCoding) -> [UInt8] {
        do {
            return try PostboxEncoder.encodeRoot(value).makeArray()
        } catch {
            preconditionFailure("\(type(of: value)) does not encode: \(error)")
        }
    }

    /// Valid encodings of many shapes: model objects through the registry, arrays of every kind, a dictionary,
    /// Codable values.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        _ = registered
        let peer = PeerId(namespace: PeerId.Namespace(2), id: PeerId.Id(1_234_567))
        let author = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(77))
        let id = MessageId(peerId: peer, namespace: 0, id: 42)
        var result: [(String, [UInt8])] = []
        let message = StoreMessage(
            id: .id(id), globallyUniqueId: 0x1234, timestamp: 1_709_251_200, flags: [.incoming], tags: MessageTags(rawValue: 8),
            forwardInfo: StoreMessageForwardInfo(authorId: author, sourceId: nil, sourceMessageId: id, date: 5, authorSignature: "E"),
            authorId: author, text: "hello",
            attributes: [SyncMessageAttribute(editVersion: 2)])
        result.append(("seed-store-message", encodedRoot(message)))
        result.append(("seed-read-state", encodedRoot(CombinedPeerReadState(states: [
            0: .idBased(maxIncomingReadId: 10, maxOutgoingReadId: 9, maxKnownId: 12, count: 2, markedUnread: false),
            1: .indexBased(maxIncomingReadIndex: MessageIndex(id: id, timestamp: 3), maxOutgoingReadIndex: MessageIndex(id: id, timestamp: 2),
                           count: 0, markedUnread: true),
        ]))))
        result.append(("seed-chat-list-index", encodedRoot(ChatListIndex(pinningIndex: 3, messageIndex: MessageIndex(id: id, timestamp: 9)))))
        result.append(("seed-sync-state", encodedRoot(SyncAccountState(pts: 5, qts: 1, date: 100, seq: 2))))
        result.append(("seed-sync-user", encodedRoot(SyncUser(id: author, firstName: "A", lastName: "B", username: "ab"))))
        let encoder = PostboxEncoder()
        encoder.encodeInt32(-7, forKey: "i")
        encoder.encodeInt64(1 << 40, forKey: "l")
        encoder.encodeBool(true, forKey: "b")
        encoder.encodeDouble(3.5, forKey: "x")
        encoder.encodeString("str", forKey: "s")
        encoder.encodeBytes([1, 2, 3], forKey: "y")
        encoder.encodeNil(forKey: "n")
        encoder.encodeInt32Array([1, -1], forKey: "ia")
        encoder.encodeInt64Array([1, -1], forKey: "la")
        encoder.encodeStringArray(["a", "bb", ""], forKey: "sa")
        encoder.encodeBytesArray([MemoryBuffer([1, 2]), MemoryBuffer()], forKey: "ba")
        encoder.encodeObject(id, forKey: "o")
        encoder.encodeObjectArray([MediaId(namespace: 1, id: 2), MediaId(namespace: 3, id: 4)], forKey: "oa")
        encoder.encodeObjectDictionary([MediaId(namespace: 1, id: 1): id], forKey: "d")
        _ = try? encoder.encodeCodable(CodableSample(name: "n", values: [1, nil, 3], nested: ["k": [1, 2]], kind: .b("s", [1.5]), flag: nil), forKey: "c")
        _ = try? encoder.encodeCodable(ApiUpdates.updateShortSentMessage(id: 1, pts: 2, ptsCount: 1, date: 3), forKey: "u")
        encoder.withBytes { result.append(("seed-fields", Array($0))) }
        if let entry = try? CodableEntry(CodableSample(name: "", values: [], nested: [:], kind: .a(-1), flag: true)) {
            result.append(("seed-codable-entry", entry.data))
        }
        return result
    }
}
