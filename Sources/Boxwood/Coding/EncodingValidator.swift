/// Checks a whole encoding once, before any field is decoded: every key length, type tag, length, count and
/// Bool byte, recursively through nested objects and arrays, up to ``PostboxDecoder/maximumNestingDepth``.
/// After it passes, field lookups and value reads cannot fail structurally (they stay bounds-checked anyway).
struct EncodingValidator {
    let reader: EncodedBytesReader
    let maximumDepth: Int

    /// Validates the field list in `range`: fields must tile it exactly.
    func validateFields(_ range: Range<Int>, depth: Int) throws(PostboxDecodingError) {
        if depth > maximumDepth { throw .nestingTooDeep(limit: maximumDepth) }
        var p = range.lowerBound
        while p < range.upperBound {
            let field = try reader.field(at: p, limit: range.upperBound)
            p = try validatePayload(field.type, at: field.payloadStart, limit: range.upperBound, depth: depth)
        }
    }

    /// Validates one payload and returns where it ends.
    private func validatePayload(_ type: PostboxFieldType, at offset: Int, limit: Int, depth: Int) throws(PostboxDecodingError) -> Int {
        switch type {
        case .bool:
            let byte = try reader.uint8(at: offset, limit: limit)
            if byte > 1 { throw .invalidBool(byte, offset: offset) }
            return offset + 1
        case .object:
            return try validateObject(at: offset, limit: limit, depth: depth + 1)
        case .objectArray, .objectDictionary:
            let perElement = type == .objectArray ? 1 : 2
            let count = try reader.length(at: offset, limit: limit, elementSize: 8 * perElement)
            var p = offset + 4
            for _ in 0..<(count * perElement) { p = try validateObject(at: p, limit: limit, depth: depth + 1) }
            return p
        case .valueArray:
            if depth + 1 > maximumDepth { throw .nestingTooDeep(limit: maximumDepth) }
            let count = try reader.length(at: offset, limit: limit, elementSize: 1)
            var p = offset + 4
            for _ in 0..<count {
                let elementType = try reader.fieldType(at: p, limit: limit)
                p = try validatePayload(elementType, at: p + 1, limit: limit, depth: depth + 1)
            }
            return p
        case .int32, .int64, .double, .null, .string, .bytes, .int32Array, .int64Array, .stringArray, .bytesArray:
            return try reader.payloadEnd(type, at: offset, limit: limit)
        }
    }

    private func validateObject(at offset: Int, limit: Int, depth: Int) throws(PostboxDecodingError) -> Int {
        let body = try reader.object(at: offset, limit: limit).body
        try validateFields(body, depth: depth)
        return body.upperBound
    }
}
