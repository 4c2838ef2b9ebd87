import BoxwoodStore
/// Writes values as a list of named, type-tagged fields (the format in `docs/coding-format.md`).
///
/// An encoder is reusable: ``reset()`` rewinds it and keeps its memory. Nested objects are written in place
/// (their length is patched once their fields are written), so encoding a tree of objects copies nothing.
///
/// ``PostboxCoding/encode(_:)`` cannot throw, so a value that fails to encode (a ``PostboxCodable`` whose
/// `encode(to:)` throws, a type whose name hashes to the reserved 0) records the first such error in
/// ``encodingError``. ``makeReadBuffer()``, ``makeArray()``, ``encodeRoot(_:)`` and the Postbox tables throw
/// it, so the incomplete bytes of a failed encoding are never stored.
public final class PostboxEncoder {
    let buffer: ByteBuffer

    /// The first error a value reported while being encoded since the encoder was created or ``reset()``.
    public private(set) var encodingError: PostboxEncodingError?

    /// An empty encoder.
    public init() {
        buffer = ByteBuffer(capacity: 256)
    }

    /// Rewinds to an empty encoding and forgets ``encodingError``, keeping the allocated memory.
    public func reset() {
        buffer.reset()
        encodingError = nil
    }

    /// The number of bytes written so far.
    public var length: Int { buffer.count }

    /// Records that a value could not be encoded. For a hand-written ``PostboxCoding/encode(_:)`` that calls a
    /// throwing encoder (such as ``encodeCodable(_:forKey:)``): it cannot throw, so it records the error here
    /// and whoever stores the encoding throws it. Only the first error is kept.
    public func recordEncodingError(_ error: PostboxEncodingError) {
        if encodingError == nil { encodingError = error }
    }

    /// Throws ``encodingError`` if a value failed to encode; the bytes written so far are then incomplete.
    public func throwIfEncodingFailed() throws(PostboxEncodingError) {
        if let encodingError { throw encodingError }
    }

    /// Lends the bytes written so far (valid only inside `body`), even those of a failed encoding: call
    /// ``throwIfEncodingFailed()`` first before storing them.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(buffer.bytes)
    }

    /// A copy of the bytes written so far, as a buffer that can be stored in a `ValueBox`; throws
    /// ``encodingError`` instead when a value failed to encode.
    public func makeReadBuffer() throws(PostboxEncodingError) -> ReadBuffer {
        try throwIfEncodingFailed()
        return ReadBuffer(copying: buffer.bytes)
    }

    /// A copy of the bytes written so far; throws ``encodingError`` instead when a value failed to encode.
    public func makeArray() throws(PostboxEncodingError) -> [UInt8] {
        try throwIfEncodingFailed()
        return Array(buffer.bytes)
    }

    // MARK: Field header

    @inline(__always) func writeKey(_ key: String, _ type: PostboxFieldType) {
        var key = key
        key.withUTF8 { utf8 in
            buffer.appendVarint(UInt64(utf8.count))
            buffer.append(UnsafeRawBufferPointer(utf8))
        }
        buffer.append(type.rawValue)
    }

    @inline(__always) func writeLength(_ count: Int) {
        precondition(count <= Int(Int32.max), "PostboxEncoder: length \(count) does not fit in an Int32")
        buffer.append(Int32(truncatingIfNeeded: count))
    }

    @inline(__always) func writeString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeLength(utf8.count)
            buffer.append(UnsafeRawBufferPointer(utf8))
        }
    }

    /// Writes an object payload: type hash, body length, body.
    @inline(__always) func writeObject(hash: Int32, _ writeBody: () -> Void) {
        buffer.append(hash)
        let lengthOffset = buffer.appendPlaceholder32()
        let start = buffer.count
        writeBody()
        let length = buffer.count - start
        precondition(length <= Int(Int32.max), "PostboxEncoder: object of \(length) bytes does not fit in an Int32")
        buffer.patch(Int32(truncatingIfNeeded: length), at: lengthOffset)
    }

    @inline(__always) func writeObjectPayload(_ value: any PostboxCoding) {
        writeObject(hash: typeHash(of: type(of: value))) { value.encode(self) }
    }

    /// The type hash to write for objects of `type`; a type whose name hashes to the reserved 0 (which would make
    /// its objects look anonymous) is recorded as ``PostboxEncodingError/reservedTypeHash(type:)``.
    @inline(__always) func typeHash(of type: any PostboxCoding.Type) -> Int32 {
        let hash = PostboxTypeRegistry.shared.hash(of: type)
        if hash == PostboxTypeRegistry.anonymousTypeHash {
            recordEncodingError(.reservedTypeHash(type: PostboxTypeIdentity(type)))
        }
        return hash
    }

    // MARK: Scalars

    /// Writes an Int32 field.
    public func encodeInt32(_ value: Int32, forKey key: String) {
        writeKey(key, .int32)
        buffer.append(value)
    }

    /// Writes an Int64 field.
    public func encodeInt64(_ value: Int64, forKey key: String) {
        writeKey(key, .int64)
        buffer.append(value)
    }

    /// Writes a Bool field (one byte, 0 or 1).
    public func encodeBool(_ value: Bool, forKey key: String) {
        writeKey(key, .bool)
        buffer.append(UInt8(value ? 1 : 0))
    }

    /// Writes a Double field (its IEEE-754 bit pattern).
    public func encodeDouble(_ value: Double, forKey key: String) {
        writeKey(key, .double)
        buffer.append(Int64(bitPattern: value.bitPattern))
    }

    /// Writes a String field (UTF-8).
    public func encodeString(_ value: String, forKey key: String) {
        writeKey(key, .string)
        writeString(value)
    }

    /// Writes a bytes field.
    public func encodeBytes(_ value: MemoryBuffer, forKey key: String) {
        encodeBytes(value.bytes, forKey: key)
    }

    /// Writes a bytes field.
    public func encodeBytes(_ value: UnsafeRawBufferPointer, forKey key: String) {
        writeKey(key, .bytes)
        writeLength(value.count)
        buffer.append(value)
    }

    /// Writes a bytes field.
    public func encodeBytes(_ value: [UInt8], forKey key: String) {
        value.withUnsafeBytes { encodeBytes($0, forKey: key) }
    }

    /// Writes an explicit "absent" field: readers see the key as missing.
    public func encodeNil(forKey key: String) {
        writeKey(key, .null)
    }

    // MARK: Objects

    /// Writes a nested object, tagged with the type hash of its dynamic type.
    public func encodeObject(_ value: any PostboxCoding, forKey key: String) {
        writeKey(key, .object)
        writeObjectPayload(value)
    }

    /// Writes the root object of a buffer: the single field `"_"`, as Postbox does.
    public func encodeRootObject(_ value: any PostboxCoding) {
        encodeObject(value, forKey: "_")
    }

    /// Encodes `value` as a root object into a new buffer; throws when `value` (or an object in it) fails to
    /// encode (see ``encodingError``).
    public static func encodeRoot(_ value: any PostboxCoding) throws(PostboxEncodingError) -> ReadBuffer {
        let encoder = PostboxEncoder()
        encoder.encodeRootObject(value)
        return try encoder.makeReadBuffer()
    }

    // MARK: Arrays

    /// Writes an array of Int32.
    public func encodeInt32Array(_ values: [Int32], forKey key: String) {
        writeKey(key, .int32Array)
        writeLength(values.count)
        buffer.reserve(values.count * 4)
        for value in values { buffer.append(value) }
    }

    /// Writes an array of Int64.
    public func encodeInt64Array(_ values: [Int64], forKey key: String) {
        writeKey(key, .int64Array)
        writeLength(values.count)
        buffer.reserve(values.count * 8)
        for value in values { buffer.append(value) }
    }

    /// Writes an array of strings.
    public func encodeStringArray(_ values: [String], forKey key: String) {
        writeKey(key, .stringArray)
        writeLength(values.count)
        for value in values { writeString(value) }
    }

    /// Writes an array of byte buffers.
    public func encodeBytesArray(_ values: [MemoryBuffer], forKey key: String) {
        writeKey(key, .bytesArray)
        writeLength(values.count)
        for value in values {
            writeLength(value.length)
            buffer.append(value.bytes)
        }
    }

    /// Writes an array of objects of one static type (each still tagged with its type hash).
    public func encodeObjectArray<T: PostboxCoding>(_ values: [T], forKey key: String) {
        writeKey(key, .objectArray)
        writeLength(values.count)
        guard !values.isEmpty else { return }
        let hash = typeHash(of: T.self)
        for value in values {
            if type(of: value) == T.self {
                writeObject(hash: hash) { value.encode(self) }
            } else {
                writeObjectPayload(value)
            }
        }
    }

    /// Writes an array of objects of any registered types, each tagged with its dynamic type's hash.
    public func encodeObjectArray(_ values: [any PostboxCoding], forKey key: String) {
        writeKey(key, .objectArray)
        writeLength(values.count)
        for value in values { writeObjectPayload(value) }
    }

    /// Writes a dictionary whose keys and values are objects. Entries are written in the dictionary's
    /// iteration order, so two equal dictionaries may encode to different bytes.
    public func encodeObjectDictionary<K: PostboxCoding & Hashable, V: PostboxCoding>(_ dictionary: [K: V], forKey key: String) {
        writeKey(key, .objectDictionary)
        writeLength(dictionary.count)
        for (entryKey, value) in dictionary {
            writeObjectPayload(entryKey)
            writeObjectPayload(value)
        }
    }
}
