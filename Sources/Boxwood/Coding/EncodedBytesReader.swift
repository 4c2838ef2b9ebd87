import BoxwoodStore
/// The header of one field: where its key bytes are, its type tag and where its payload starts.
struct FieldHeader {
    var keyStart: Int
    var keyLength: Int
    var type: PostboxFieldType
    var payloadStart: Int
}

/// Bounds-checked reads of the encoded format over a region of memory. Every method checks that what it reads
/// lies before `limit` and throws a ``PostboxDecodingError`` otherwise, so neither validation nor decoding can
/// read out of bounds, even on bytes that were never validated.
struct EncodedBytesReader {
    let base: UnsafeRawPointer

    /// The bytes before `limit`, where every read of this reader is checked.
    @inline(__always) func bytes(before limit: Int) -> ByteReader {
        ByteReader(UnsafeRawBufferPointer(start: base, count: max(limit, 0)))
    }

    @inline(__always) func require(_ needed: Int, at offset: Int, limit: Int) throws(PostboxDecodingError) {
        do throws(ByteReadError) { try bytes(before: limit).require(needed, at: offset) } catch { throw PostboxDecodingError(error) }
    }

    @inline(__always) func uint8(at offset: Int, limit: Int) throws(PostboxDecodingError) -> UInt8 {
        do throws(ByteReadError) { return try bytes(before: limit).integer(at: offset) } catch { throw PostboxDecodingError(error) }
    }

    @inline(__always) func int32(at offset: Int, limit: Int) throws(PostboxDecodingError) -> Int32 {
        do throws(ByteReadError) { return try bytes(before: limit).integer(at: offset) } catch { throw PostboxDecodingError(error) }
    }

    @inline(__always) func int64(at offset: Int, limit: Int) throws(PostboxDecodingError) -> Int64 {
        do throws(ByteReadError) { return try bytes(before: limit).integer(at: offset) } catch { throw PostboxDecodingError(error) }
    }

    /// A non-negative Int32 length or count whose `elementSize`-byte elements fit before `limit` once the
    /// 4-byte prefix is read.
    @inline(__always) func length(at offset: Int, limit: Int, elementSize: Int) throws(PostboxDecodingError) -> Int {
        let raw = try int32(at: offset, limit: limit)
        let value = Int(raw)
        let available = limit - offset - 4
        if value < 0 || (elementSize > 0 && value > available / elementSize) {
            throw .invalidLength(Int64(raw), offset: offset)
        }
        return value
    }

    /// The field that starts at `offset`: varint key length, key bytes, type tag.
    @inline(__always) func field(at offset: Int, limit: Int) throws(PostboxDecodingError) -> FieldHeader {
        var reader = bytes(before: limit)
        reader.offset = offset
        // At most 5 bytes: 35 bits, more than any key length that fits in memory.
        let keyLength: Int
        do throws(ByteReadError) { keyLength = Int(try reader.varint(maxBytes: 5)) } catch { throw .invalidKeyLength(offset: offset) }
        var p = reader.offset
        if keyLength > limit - p { throw .invalidKeyLength(offset: offset) }
        let keyStart = p
        p += keyLength
        let type = try fieldType(at: p, limit: limit)
        return FieldHeader(keyStart: keyStart, keyLength: keyLength, type: type, payloadStart: p + 1)
    }

    @inline(__always) func fieldType(at offset: Int, limit: Int) throws(PostboxDecodingError) -> PostboxFieldType {
        let tag = try uint8(at: offset, limit: limit)
        guard let type = PostboxFieldType(rawValue: tag) else { throw .unknownFieldType(tag: tag, offset: offset) }
        return type
    }

    /// The object header at `offset` (type hash, body length) and the body's range.
    @inline(__always) func object(at offset: Int, limit: Int) throws(PostboxDecodingError) -> (hash: Int32, body: Range<Int>) {
        let hash = try int32(at: offset, limit: limit)
        let length = try self.length(at: offset + 4, limit: limit, elementSize: 1)
        let start = offset + 8
        return (hash, start..<(start + length))
    }

    /// Where the payload of a `type` value starting at `offset` ends, without looking inside nested objects.
    func payloadEnd(_ type: PostboxFieldType, at offset: Int, limit: Int) throws(PostboxDecodingError) -> Int {
        switch type {
        case .int32:
            try require(4, at: offset, limit: limit)
            return offset + 4
        case .int64, .double:
            try require(8, at: offset, limit: limit)
            return offset + 8
        case .bool:
            try require(1, at: offset, limit: limit)
            return offset + 1
        case .null:
            return offset
        case .string, .bytes:
            return offset + 4 + (try length(at: offset, limit: limit, elementSize: 1))
        case .object:
            return try object(at: offset, limit: limit).body.upperBound
        case .int32Array:
            return offset + 4 + 4 * (try length(at: offset, limit: limit, elementSize: 4))
        case .int64Array:
            return offset + 4 + 8 * (try length(at: offset, limit: limit, elementSize: 8))
        case .stringArray, .bytesArray:
            let count = try length(at: offset, limit: limit, elementSize: 4)
            var p = offset + 4
            for _ in 0..<count { p += 4 + (try length(at: p, limit: limit, elementSize: 1)) }
            return p
        case .objectArray, .objectDictionary:
            let perElement = type == .objectArray ? 1 : 2
            let count = try length(at: offset, limit: limit, elementSize: 8 * perElement)
            var p = offset + 4
            for _ in 0..<(count * perElement) { p = try object(at: p, limit: limit).body.upperBound }
            return p
        case .valueArray:
            let count = try length(at: offset, limit: limit, elementSize: 1)
            var p = offset + 4
            for _ in 0..<count {
                let elementType = try fieldType(at: p, limit: limit)
                p = try payloadEnd(elementType, at: p + 1, limit: limit)
            }
            return p
        }
    }
}
