import Foundation

/// One encoded value inside a decoder's region, as seen by the Codable bridge's containers.
struct CodableSlot {
    let region: PostboxDecoder
    let value: FieldValue
    let codingPath: [any CodingKey]

    private func mismatch(_ type: Any.Type) -> DecodingError {
        let description = value.type == .null
            ? "expected \(type), found null"
            : "expected \(type), found a \(value.type) field"
        if value.type == .null {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: description))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: description))
    }

    private func corrupted(_ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: description))
    }

    /// An integer of any width from an Int32 or Int64 field; `UInt64` and `UInt` take the Int64 bit pattern.
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch value.type {
        case .int32:
            guard let raw = region.int32Payload(value) else { throw corrupted("unreadable Int32") }
            guard let result = T(exactly: raw) else { throw corrupted("\(raw) does not fit in \(T.self)") }
            return result
        case .int64:
            guard let raw = region.int64Payload(value) else { throw corrupted("unreadable Int64") }
            if T.self == UInt64.self || T.self == UInt.self, let result = T(exactly: UInt64(bitPattern: raw)) {
                return result
            }
            guard let result = T(exactly: raw) else { throw corrupted("\(raw) does not fit in \(T.self)") }
            return result
        default:
            throw mismatch(type)
        }
    }

    func bool() throws -> Bool {
        guard value.type == .bool else { throw mismatch(Bool.self) }
        guard let result = region.boolPayload(value) else { throw corrupted("unreadable Bool") }
        return result
    }

    func double() throws -> Double {
        guard value.type == .double else { throw mismatch(Double.self) }
        guard let result = region.doublePayload(value) else { throw corrupted("unreadable Double") }
        return result
    }

    func string() throws -> String {
        guard value.type == .string else { throw mismatch(String.self) }
        guard let result = region.stringPayload(at: value.payload) else { throw corrupted("unreadable String") }
        return result
    }

    func data() throws -> Data {
        guard value.type == .bytes else { throw mismatch(Data.self) }
        guard let bytes = region.rawBytes(at: value.payload) else { throw corrupted("unreadable bytes") }
        return Data(bytes)
    }

    /// Any `Decodable`, through a nested ``AdaptedPostboxDecoder`` (`Data` straight from a bytes field).
    func decodable<T: Decodable>(_ type: T.Type) throws -> T {
        if type == Data.self, let bytes = try data() as? T { return bytes }
        return try T(from: AdaptedPostboxDecoder(slot: self))
    }

    /// The elements of an array-typed value, for an unkeyed container. An object dictionary reads as its keys
    /// and values alternating, which is how `Codable` dictionaries with non-string keys are shaped.
    func elements() throws -> [FieldValue] {
        let reader = region.reader
        let limit = region.end
        do {
            switch value.type {
            case .valueArray:
                let count = try reader.length(at: value.payload, limit: limit, elementSize: 1)
                var result: [FieldValue] = []
                result.reserveCapacity(count)
                var p = value.payload + 4
                for _ in 0..<count {
                    let type = try reader.fieldType(at: p, limit: limit)
                    result.append(FieldValue(type: type, payload: p + 1))
                    p = try reader.payloadEnd(type, at: p + 1, limit: limit)
                }
                return result
            case .int32Array, .int64Array:
                let size = value.type == .int32Array ? 4 : 8
                let count = try reader.length(at: value.payload, limit: limit, elementSize: size)
                let type: PostboxFieldType = size == 4 ? .int32 : .int64
                return (0..<count).map { FieldValue(type: type, payload: value.payload + 4 + $0 * size) }
            case .stringArray, .bytesArray:
                let count = try reader.length(at: value.payload, limit: limit, elementSize: 4)
                let type: PostboxFieldType = value.type == .stringArray ? .string : .bytes
                var result: [FieldValue] = []
                result.reserveCapacity(count)
                var p = value.payload + 4
                for _ in 0..<count {
                    result.append(FieldValue(type: type, payload: p))
                    p += 4 + (try reader.length(at: p, limit: limit, elementSize: 1))
                }
                return result
            case .objectArray, .objectDictionary:
                var result: [FieldValue] = []
                try region.forEachObject(inArrayAt: value.payload, perElement: value.type == .objectArray ? 1 : 2) { offset in
                    result.append(FieldValue(type: .object, payload: offset))
                }
                return result
            default:
                throw mismatch([Any].self)
            }
        } catch let error as PostboxDecodingError {
            throw corrupted(error.description)
        }
    }

    /// A decoder over the fields of an object value, for a keyed container. Any object is accepted: its type
    /// hash is not consulted, so a `Decodable` type can read what a `PostboxCoding` type wrote.
    func fields() throws -> PostboxDecoder {
        guard value.type == .object else { throw mismatch([String: Any].self) }
        do {
            return try region.objectPayload(at: value.payload, key: "").decoder
        } catch {
            throw corrupted(error.description)
        }
    }
}
