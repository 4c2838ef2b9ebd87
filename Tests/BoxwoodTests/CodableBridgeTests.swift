import Foundation
import Testing
import Boxwood

private struct Envelope: Codable, Equatable {
    enum Priority: Int, Codable { case low = 0, high = 2 }
    enum Channel: String, Codable { case email, push }
    enum Payload: Codable, Equatable {
        case text(String)
        case location(latitude: Double, longitude: Double)
        case empty
    }
    struct Recipient: Codable, Equatable, Hashable {
        var id: Int64
        var name: String?
        var aliases: [String]
    }

    var id: UUID
    var created: Date
    var subject: String?
    var missing: String?
    var priority: Priority
    var channels: Set<Channel>
    var payloads: [Payload]
    var recipients: [Recipient]
    var byName: [String: Recipient]
    var byNumber: [Int: String]
    var weights: [Channel: Double]
    var matrix: [[Int16]]
    var sparse: [Int?]
    var attachment: Data
    var tiny: Int8
    var huge: UInt64
    var ratio: Float
    var flags: [Bool]
    var nested: [String: [String: [Int]]]
}

private class Animal: Codable {
    var legs: Int
    init(legs: Int) { self.legs = legs }
}

private final class Dog: Animal {
    var name: String
    init(name: String) {
        self.name = name
        super.init(legs: 4)
    }
    private enum CodingKeys: String, CodingKey { case name }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try super.encode(to: container.superEncoder())
    }
}

/// Reads the fields that `MessageId` writes through `PostboxCoding`.
private struct MessageIdFields: Decodable, Equatable {
    var p: Int64
    var n: Int32
    var i: Int32
}

@Suite struct CodableBridgeTests {
    private let envelope = Envelope(
        id: UUID(uuidString: "12345678-1234-1234-1234-123456789ABC")!,
        created: Date(timeIntervalSince1970: 1_709_251_200.5),
        subject: "Quarterly numbers",
        missing: nil,
        priority: .high,
        channels: [.email, .push],
        payloads: [.text("hi"), .location(latitude: 52.5, longitude: -13.25), .empty],
        recipients: [.init(id: 1, name: "Ada", aliases: ["a", "al"]), .init(id: -2, name: nil, aliases: [])],
        byName: ["ada": .init(id: 1, name: "Ada", aliases: []), String(repeating: "long key ", count: 40): .init(id: 3, name: "", aliases: ["x"])],
        byNumber: [1: "one", -7: "minus seven", Int.max: "max"],
        weights: [.email: 0.25, .push: 1e300],
        matrix: [[1, 2], [], [Int16.min, Int16.max]],
        sparse: [1, nil, 3, nil],
        attachment: Data([0, 1, 2, 254, 255]),
        tiny: Int8.min,
        huge: UInt64.max,
        ratio: 0.5,
        flags: [true, false],
        nested: ["a": ["b": [1, 2, 3]], "c": [:]]
    )

    @Test func nestedCodableStructRoundTrips() throws {
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(envelope, forKey: "e")
        encoder.encodeInt32(5, forKey: "after")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        let decoded = try decoder.decodeCodable(Envelope.self, forKey: "e")
        #expect(decoded == envelope)
        #expect(decoder.decodeOptionalInt32ForKey("after") == 5)
        #expect(try decoder.decodeCodable(Envelope.self, forKey: "absent") == nil)
    }

    @Test func scalarsAndCollectionsAtTheTopLevel() throws {
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(42, forKey: "int")
        try encoder.encodeCodable("text", forKey: "string")
        try encoder.encodeCodable([1.5, 2.5], forKey: "doubles")
        try encoder.encodeCodable(Optional<Int>.none, forKey: "none")
        try encoder.encodeCodable(Envelope.Channel.push, forKey: "enum")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        #expect(try decoder.decodeCodable(Int.self, forKey: "int") == 42)
        #expect(decoder.decodeOptionalInt64ForKey("int") == 42, "an Int is stored as a plain Int64 field")
        #expect(try decoder.decodeCodable(String.self, forKey: "string") == "text")
        #expect(try decoder.decodeCodable([Double].self, forKey: "doubles") == [1.5, 2.5])
        #expect(try decoder.decodeCodable(Int.self, forKey: "none") == nil)
        #expect(!decoder.containsKey("none"))
        #expect(try decoder.decodeCodable(Envelope.Channel.self, forKey: "enum") == .push)
    }

    @Test func classHierarchiesUseSuperEncoders() throws {
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(Dog(name: "Rex"), forKey: "d")
        let dog = try PostboxDecoder(bytes: encoder.makeArray()).decodeCodable(Dog.self, forKey: "d")
        #expect(dog?.name == "Rex" && dog?.legs == 4)
    }

    @Test func codableTypesReadPostboxCodingObjectsAndArrays() throws {
        let encoder = PostboxEncoder()
        encoder.encodeObject(MessageId(peerId: PeerId(99), namespace: 1, id: 7), forKey: "m")
        encoder.encodeInt32Array([1, 2, 3], forKey: "ints")
        encoder.encodeStringArray(["x", "y"], forKey: "strings")
        encoder.encodeObjectArray([MediaId(namespace: 1, id: 2)], forKey: "objects")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        #expect(try decoder.decodeCodable(MessageIdFields.self, forKey: "m") == MessageIdFields(p: 99, n: 1, i: 7))
        #expect(try decoder.decodeCodable([UInt8].self, forKey: "ints") == [1, 2, 3])
        #expect(try decoder.decodeCodable([String].self, forKey: "strings") == ["x", "y"])
        #expect(try decoder.decodeCodable([[String: Int64]].self, forKey: "objects") == [["n": 1, "i": 2]])
    }

    @Test func mismatchesAreTypedErrors() throws {
        let encoder = PostboxEncoder()
        try encoder.encodeCodable(["a": "b"], forKey: "dict")
        try encoder.encodeCodable(300, forKey: "big")
        let decoder = try PostboxDecoder(bytes: encoder.makeArray())
        #expect {
            try decoder.decodeCodable(Envelope.self, forKey: "dict")
        } throws: { error in
            guard let error = error as? PostboxDecodingError, case .codable = error else { return false }
            return true
        }
        #expect {
            try decoder.decodeCodable(UInt8.self, forKey: "big")
        } throws: { error in
            guard let error = error as? PostboxDecodingError, case let .codable(text) = error else { return false }
            return text.contains("300")
        }
    }

    @Test func codableEntryRoundTripsAndNests() throws {
        let entry = try CodableEntry(envelope)
        #expect(try entry.get(Envelope.self) == envelope)
        let nested = try roundTrip(entry)
        #expect(nested == entry)
        #expect(try nested.get(Envelope.self) == envelope)
        #expect(throws: PostboxDecodingError.self) { try CodableEntry(data: [1, 2, 3]).get(Int.self) }
        let asPreferences: any PreferencesEntry = entry
        #expect(asPreferences.isEqual(to: nested))
    }
}
