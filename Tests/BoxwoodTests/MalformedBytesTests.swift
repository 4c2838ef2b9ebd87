import Testing
import Boxwood
import BoxwoodStore

private struct CodableSample: Codable, Equatable {
    enum Kind: Codable, Equatable { case a(Int), b(String, [Double]) }
    var name: String
    var values: [Int32?]
    var nested: [String: [UInt8]]
    var kind: Kind
}

/// Malformed encodings must end in a typed `PostboxDecodingError` or decode to something; they must never trap
/// or read out of bounds.
@Suite struct MalformedBytesTests {
    private func hand(_ bytes: [UInt8]) throws(PostboxDecodingError) -> PostboxDecoder {
        try PostboxDecoder(bytes: bytes)
    }

    @Test func specificDamageGivesSpecificErrors() throws {
        // Truncated Int32 payload.
        #expect(throws: PostboxDecodingError.truncated(offset: 3, needed: 4, available: 2)) { try hand([1, 0x61, 0, 1, 2]) }
        // Unknown type tag.
        #expect(throws: PostboxDecodingError.unknownFieldType(tag: 0x7f, offset: 2)) { try hand([1, 0x61, 0x7f]) }
        // Negative string length.
        #expect(throws: PostboxDecodingError.invalidLength(-1, offset: 3)) { try hand([1, 0x61, 4, 0xff, 0xff, 0xff, 0xff]) }
        // Absurd array count.
        #expect(throws: PostboxDecodingError.invalidLength(Int64(Int32.max), offset: 3)) { try hand([1, 0x61, 6, 0xff, 0xff, 0xff, 0x7f, 0, 0]) }
        // Bool that is neither 0 nor 1.
        #expect(throws: PostboxDecodingError.invalidBool(2, offset: 3)) { try hand([1, 0x61, 2, 2]) }
        // Key length past the end, and an unterminated varint.
        #expect(throws: PostboxDecodingError.invalidKeyLength(offset: 0)) { try hand([9, 0x61]) }
        #expect(throws: PostboxDecodingError.invalidKeyLength(offset: 0)) { try hand([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]) }
        // Object body longer than the buffer.
        #expect(throws: PostboxDecodingError.invalidLength(100, offset: 7)) { try hand([1, 0x61, 5, 1, 0, 0, 0, 100, 0, 0, 0]) }
        // Object body that ends inside a field.
        #expect(throws: PostboxDecodingError.truncated(offset: 14, needed: 4, available: 1)) {
            try hand([1, 0x61, 5, 1, 0, 0, 0, 4, 0, 0, 0, 1, 0x62, 0, 0])
        }
    }

    /// Valid encodings of many shapes, to damage.
    private func corpus() throws -> [[UInt8]] {
        try registerTestTypes()
        var result: [[UInt8]] = []
        result.append(try encodeRoot(sampleStoreMessage()).makeArray())
        result.append(try encodeRoot(TestUser(id: PeerId(12), firstName: "Linus", lastName: "T", username: nil, associatedPeerId: PeerId(3))).makeArray())
        result.append(try encodeRoot(CombinedPeerReadState(states: [
            0: .idBased(maxIncomingReadId: 10, maxOutgoingReadId: 9, maxKnownId: 12, count: 2, markedUnread: false),
            1: .indexBased(maxIncomingReadIndex: MessageIndex(id: MessageId(peerId: PeerId(1), namespace: 1, id: 2), timestamp: 3),
                           maxOutgoingReadIndex: MessageIndex(id: MessageId(peerId: PeerId(1), namespace: 1, id: 1), timestamp: 2),
                           count: 0, markedUnread: true),
        ])).makeArray())
        let encoder = PostboxEncoder()
        encoder.encodeStringArray(["a", "bb", ""], forKey: "s")
        encoder.encodeBytesArray([MemoryBuffer([1, 2]), MemoryBuffer()], forKey: "b")
        encoder.encodeInt64Array([1, -1], forKey: "l")
        encoder.encodeObjectDictionary([MediaId(namespace: 1, id: 1): MessageId(peerId: PeerId(1), namespace: 0, id: 1)], forKey: "d")
        encoder.encodeDouble(3.5, forKey: "x")
        try encoder.encodeCodable(CodableSample(name: "n", values: [1, nil, 3], nested: ["k": [1, 2]], kind: .b("s", [1.5])), forKey: "c")
        result.append(try encoder.makeArray())
        result.append(try CodableEntry(CodableSample(name: "", values: [], nested: [:], kind: .a(-1))).data)
        return result
    }

    /// Exercises every read path a damaged buffer can reach once it passed validation.
    private func readEverything(_ decoder: PostboxDecoder) {
        for key in decoder.fieldKeys {
            _ = decoder.decodeOptionalInt32ForKey(key)
            _ = decoder.decodeOptionalInt64ForKey(key)
            _ = decoder.decodeOptionalBoolForKey(key)
            _ = decoder.decodeOptionalDoubleForKey(key)
            _ = decoder.decodeOptionalStringForKey(key)
            _ = decoder.decodeBytesForKey(key)
            _ = decoder.decodeInt32ArrayForKey(key)
            _ = decoder.decodeInt64ArrayForKey(key)
            _ = decoder.decodeStringArrayForKey(key)
            _ = decoder.decodeBytesArrayForKey(key)
            _ = try? decoder.decodeObjectForKey(key)
            _ = try? decoder.decodeObjectArrayForKey(key, skippingUnknownTypes: true)
            _ = try? decoder.decodeObjectDictionaryForKey(key, keyType: MediaId.self, valueType: MessageId.self)
            _ = try? decoder.decodeCodable(CodableSample.self, forKey: key)
            _ = try? decoder.decodeCodable([String: Int].self, forKey: key)
            _ = try? decoder.decodeCodable([Int64?].self, forKey: key)
        }
        _ = try? decoder.decodeRootObject()
        _ = try? decoder.decodeRootObject(as: StoreMessage.self)
        _ = try? decoder.decodeRootObject(as: CombinedPeerReadState.self)
    }

    @Test func randomDamageNeverTraps() throws {
        let seed = testSeed("MalformedBytesTests.randomDamageNeverTraps")
        var rng = SplitMix64(seed: seed)
        let samples = try corpus()
        var rejected = 0
        var decoded = 0
        var errorKinds: [String: Int] = [:]
        for _ in 0..<4_000 {
            var bytes = samples[rng.below(samples.count)]
            switch rng.below(5) {
            case 0:
                bytes = Array(bytes.prefix(rng.below(bytes.count)))
            case 1:
                for _ in 0..<(1 + rng.below(4)) {
                    let position = rng.below(bytes.count)
                    bytes[position] ^= UInt8(1 << rng.below(8))
                }
            case 2:
                let position = rng.below(max(bytes.count - 4, 1))
                let value = [UInt32.max, 0x7fff_ffff, 0x8000_0000, UInt32(truncatingIfNeeded: rng.next())][rng.below(4)]
                for i in 0..<min(4, bytes.count - position) { bytes[position + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
            case 3:
                bytes.insert(contentsOf: rng.bytes(1 + rng.below(6)), at: rng.below(bytes.count + 1))
            default:
                bytes = rng.bytes(rng.below(64))
            }
            do {
                let decoder = try PostboxDecoder(bytes: bytes)
                decoded += 1
                readEverything(decoder)
            } catch {
                rejected += 1
                errorKinds["\(error)".prefix(while: { $0 != "(" && $0 != " " }).description, default: 0] += 1
                #expect(!error.description.isEmpty)
            }
        }
        print("MalformedBytesTests: \(rejected) rejected, \(decoded) passed validation and were read; errors \(errorKinds.sorted { $0.key < $1.key })")
        #expect(rejected > 0)
    }

    @Test func everyTruncationOfAValidEncodingIsHandled() throws {
        for sample in try corpus() {
            for length in 0..<sample.count {
                if let decoder = try? PostboxDecoder(bytes: Array(sample.prefix(length))) { readEverything(decoder) }
            }
        }
    }
}
