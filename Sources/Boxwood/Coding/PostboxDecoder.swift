import BoxwoodPlatform
import BoxwoodStore

/// A field found by key: its type tag and where its payload starts.
struct FieldValue {
    var type: PostboxFieldType
    var payload: Int
}

/// Reads the fields of one encoded object (see `docs/coding-format.md`).
///
/// Creating a decoder over a buffer validates the whole encoding first (every length, tag and nesting level),
/// so a malformed buffer is reported as a ``PostboxDecodingError`` before any value is read. Lookups then
/// cannot fail structurally: a field that is absent, stored as `null` or stored with another type reads as
/// absent (`nil`, the `orElse:` default, an empty array), and the throwing `decode…(forKey:)` forms report
/// exactly which of those it was. Fields are searched from just after the previous hit, wrapping around once,
/// so reading fields in the order they were written costs O(1) per field.
public final class PostboxDecoder {
    /// The deepest nesting of objects and arrays a buffer may use.
    public static let maximumNestingDepth = 100

    let owner: AnyObject?
    let reader: EncodedBytesReader
    let start: Int
    let end: Int
    /// Where the next lookup starts. The lookup state opts out of dynamic exclusivity checks: it is only
    /// read and written by `lookup`, in accesses that never overlap.
    @exclusivity(unchecked) var cursor: Int
    /// The previous hit, checked first: Codable's `decodeIfPresent` looks the same key up two or three times.
    @exclusivity(unchecked) var lastHitKeyStart = 0
    @exclusivity(unchecked) var lastHitKeyLength = -1
    @exclusivity(unchecked) var lastHitValue = FieldValue(type: .null, payload: 0)

    init(owner: AnyObject?, reader: EncodedBytesReader, range: Range<Int>) {
        self.owner = owner
        self.reader = reader
        start = range.lowerBound
        end = range.upperBound
        cursor = range.lowerBound
    }

    nonisolated(unsafe) private static let emptyBase = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 8)

    static func validate(_ base: UnsafeRawPointer, count: Int) throws(PostboxDecodingError) {
        let validator = EncodingValidator(reader: EncodedBytesReader(base: base), maximumDepth: maximumNestingDepth)
        try validator.validateFields(0..<count, depth: 0)
    }

    /// A decoder over the fields in `buffer`, which it keeps alive. Validates the whole buffer first.
    public convenience init(buffer: MemoryBuffer) throws(PostboxDecodingError) {
        try Self.validate(buffer.memory, count: buffer.length)
        self.init(owner: buffer, reader: EncodedBytesReader(base: buffer.memory), range: 0..<buffer.length)
    }

    /// A decoder over a copy of `bytes`. Validates the whole encoding first.
    public convenience init(bytes: [UInt8]) throws(PostboxDecodingError) {
        let copy = bytes.withUnsafeBytes { ReadBuffer(copying: $0) }
        try self.init(buffer: copy)
    }

    /// Decodes straight from borrowed memory (for example a value lent by `ValueBox.withValue`) without copying
    /// it. Every value the decoder returns is a copy, but the decoder itself must not escape `body`.
    public static func withDecoder<R>(over bytes: UnsafeRawBufferPointer, _ body: (PostboxDecoder) throws(PostboxDecodingError) -> R) throws(PostboxDecodingError) -> R {
        let base = bytes.baseAddress ?? UnsafeRawPointer(emptyBase)
        try validate(base, count: bytes.count)
        return try body(PostboxDecoder(owner: nil, reader: EncodedBytesReader(base: base), range: 0..<bytes.count))
    }

    /// A decoder over a nested object's body (already validated with its parent).
    func child(_ body: Range<Int>) -> PostboxDecoder {
        PostboxDecoder(owner: owner, reader: reader, range: body)
    }

    // MARK: Field lookup

    /// Finds the field named `key`, searching from the field after the previous hit and wrapping once.
    @inline(__always) func lookup(_ key: String) -> FieldValue? {
        if let found = key.utf8.withContiguousStorageIfAvailable({ lookup(keyBytes: UnsafeRawBufferPointer($0)) }) {
            return found
        }
        return Array(key.utf8).withUnsafeBytes { lookup(keyBytes: $0) }
    }

    private func lookup(keyBytes: UnsafeRawBufferPointer) -> FieldValue? {
        if lastHitKeyLength == keyBytes.count && keysEqual(lastHitKeyStart, keyBytes) { return lastHitValue }
        let origin = cursor
        var p = origin
        var limit = end
        var wrapped = false
        while true {
            if p >= limit {
                if wrapped || origin == start { return nil }
                wrapped = true
                p = start
                limit = origin
                continue
            }
            guard let field = try? reader.field(at: p, limit: end),
                  let next = try? reader.payloadEnd(field.type, at: field.payloadStart, limit: end) else { return nil }
            if field.keyLength == keyBytes.count && keysEqual(field.keyStart, keyBytes) {
                cursor = next < end ? next : start
                lastHitKeyStart = field.keyStart
                lastHitKeyLength = field.keyLength
                lastHitValue = FieldValue(type: field.type, payload: field.payloadStart)
                return lastHitValue
            }
            p = next
        }
    }

    /// Whether the stored key at `keyStart` has the bytes `keyBytes` (the lengths are already equal).
    @inline(__always) private func keysEqual(_ keyStart: Int, _ keyBytes: UnsafeRawBufferPointer) -> Bool {
        // Non-empty bytes have an address.
        keyBytes.count == 0 || bytesEqual(reader.base + keyStart, keyBytes.baseAddress!, count: keyBytes.count)
    }

    /// Calls `body` with each field's key and value, in stored order.
    func forEachField(_ body: (String, FieldValue) -> Void) {
        var p = start
        while p < end {
            guard let field = try? reader.field(at: p, limit: end),
                  let next = try? reader.payloadEnd(field.type, at: field.payloadStart, limit: end) else { return }
            let key = String(decoding: UnsafeRawBufferPointer(start: reader.base + field.keyStart, count: field.keyLength), as: UTF8.self)
            body(key, FieldValue(type: field.type, payload: field.payloadStart))
            p = next
        }
    }

    /// The keys of all fields, in stored order (including `null` fields and repeated keys).
    public var fieldKeys: [String] {
        var keys: [String] = []
        forEachField { key, _ in keys.append(key) }
        return keys
    }

    /// Whether a field named `key` is present with a value (not `null`).
    public func containsKey(_ key: String) -> Bool {
        guard let value = lookup(key) else { return false }
        return value.type != .null
    }

    /// The stored type of the field named `key`, if any.
    public func fieldType(forKey key: String) -> PostboxFieldType? {
        lookup(key)?.type
    }

    /// The value of `key` for a required field of `type`, or the precise reason it is unusable.
    @inline(__always) func required(_ key: String, _ type: PostboxFieldType) throws(PostboxDecodingError) -> FieldValue {
        guard let value = lookup(key), value.type != .null else { throw .missingField(key: key) }
        guard value.type == type else { throw .typeMismatch(key: key, expected: type, found: value.type) }
        return value
    }

    // MARK: Reading payloads (bounds-checked; nil only if the bytes were never validated and are bad)

    @inline(__always) func int32Payload(_ value: FieldValue) -> Int32? {
        try? reader.int32(at: value.payload, limit: end)
    }

    @inline(__always) func int64Payload(_ value: FieldValue) -> Int64? {
        try? reader.int64(at: value.payload, limit: end)
    }

    @inline(__always) func boolPayload(_ value: FieldValue) -> Bool? {
        guard let byte = try? reader.uint8(at: value.payload, limit: end) else { return nil }
        return byte != 0
    }

    @inline(__always) func doublePayload(_ value: FieldValue) -> Double? {
        guard let bits = try? reader.int64(at: value.payload, limit: end) else { return nil }
        return Double(bitPattern: UInt64(bitPattern: bits))
    }

    /// A string (or bytes) payload at `offset`: Int32 length, then the bytes.
    @inline(__always) func rawBytes(at offset: Int) -> UnsafeRawBufferPointer? {
        guard let length = try? reader.length(at: offset, limit: end, elementSize: 1) else { return nil }
        return UnsafeRawBufferPointer(start: reader.base + offset + 4, count: length)
    }

    /// Invalid UTF-8 is repaired (replacement characters), never trapped on.
    @inline(__always) func stringPayload(at offset: Int) -> String? {
        guard let bytes = rawBytes(at: offset) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Scalars

    /// The Int32 field `key`, or `orElse` when absent or not an Int32.
    public func decodeInt32ForKey(_ key: String, orElse defaultValue: Int32) -> Int32 {
        decodeOptionalInt32ForKey(key) ?? defaultValue
    }

    /// The Int32 field `key`, or nil when absent or not an Int32.
    public func decodeOptionalInt32ForKey(_ key: String) -> Int32? {
        guard let value = lookup(key), value.type == .int32 else { return nil }
        return int32Payload(value)
    }

    /// The required Int32 field `key`.
    public func decodeInt32(forKey key: String) throws(PostboxDecodingError) -> Int32 {
        guard let result = int32Payload(try required(key, .int32)) else { throw .missingField(key: key) }
        return result
    }

    /// The Int64 field `key` (an Int32 field is widened), or `orElse` when absent or of another type.
    public func decodeInt64ForKey(_ key: String, orElse defaultValue: Int64) -> Int64 {
        decodeOptionalInt64ForKey(key) ?? defaultValue
    }

    /// The Int64 field `key` (an Int32 field is widened), or nil when absent or of another type.
    public func decodeOptionalInt64ForKey(_ key: String) -> Int64? {
        guard let value = lookup(key) else { return nil }
        switch value.type {
        case .int64: return int64Payload(value)
        case .int32: return int32Payload(value).map(Int64.init)
        default: return nil
        }
    }

    /// The required Int64 field `key` (an Int32 field is widened).
    public func decodeInt64(forKey key: String) throws(PostboxDecodingError) -> Int64 {
        guard let value = lookup(key), value.type != .null else { throw .missingField(key: key) }
        switch value.type {
        case .int64: if let result = int64Payload(value) { return result }
        case .int32: if let result = int32Payload(value) { return Int64(result) }
        default: throw .typeMismatch(key: key, expected: .int64, found: value.type)
        }
        throw .missingField(key: key)
    }

    /// The Bool field `key`, or `orElse` when absent or not a Bool.
    public func decodeBoolForKey(_ key: String, orElse defaultValue: Bool) -> Bool {
        decodeOptionalBoolForKey(key) ?? defaultValue
    }

    /// The Bool field `key`, or nil when absent or not a Bool.
    public func decodeOptionalBoolForKey(_ key: String) -> Bool? {
        guard let value = lookup(key), value.type == .bool else { return nil }
        return boolPayload(value)
    }

    /// The required Bool field `key`.
    public func decodeBool(forKey key: String) throws(PostboxDecodingError) -> Bool {
        guard let result = boolPayload(try required(key, .bool)) else { throw .missingField(key: key) }
        return result
    }

    /// The Double field `key`, or `orElse` when absent or not a Double.
    public func decodeDoubleForKey(_ key: String, orElse defaultValue: Double) -> Double {
        decodeOptionalDoubleForKey(key) ?? defaultValue
    }

    /// The Double field `key`, or nil when absent or not a Double.
    public func decodeOptionalDoubleForKey(_ key: String) -> Double? {
        guard let value = lookup(key), value.type == .double else { return nil }
        return doublePayload(value)
    }

    /// The required Double field `key`.
    public func decodeDouble(forKey key: String) throws(PostboxDecodingError) -> Double {
        guard let result = doublePayload(try required(key, .double)) else { throw .missingField(key: key) }
        return result
    }

    /// The String field `key`, or `orElse` when absent or not a String.
    public func decodeStringForKey(_ key: String, orElse defaultValue: String) -> String {
        decodeOptionalStringForKey(key) ?? defaultValue
    }

    /// The String field `key`, or nil when absent or not a String.
    public func decodeOptionalStringForKey(_ key: String) -> String? {
        guard let value = lookup(key), value.type == .string else { return nil }
        return stringPayload(at: value.payload)
    }

    /// The required String field `key`.
    public func decodeString(forKey key: String) throws(PostboxDecodingError) -> String {
        guard let result = stringPayload(at: try required(key, .string).payload) else { throw .missingField(key: key) }
        return result
    }

    /// A copy of the bytes field `key`, or nil when absent or not bytes.
    public func decodeBytesForKey(_ key: String) -> ReadBuffer? {
        guard let value = lookup(key), value.type == .bytes, let bytes = rawBytes(at: value.payload) else { return nil }
        return ReadBuffer(copying: bytes)
    }

    /// The bytes field `key` as an array, or nil when absent or not bytes.
    public func decodeByteArrayForKey(_ key: String) -> [UInt8]? {
        guard let value = lookup(key), value.type == .bytes, let bytes = rawBytes(at: value.payload) else { return nil }
        return Array(bytes)
    }
}
