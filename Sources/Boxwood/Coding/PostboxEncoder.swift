import BoxwoodStore
/// Writes values as a list of named, type-tagged fields (the format in `docs/coding-format.md`).
///
/// An encoder is reusable: ``reset()`` rewinds it and keeps its memory. Nested objects are written in place
/// (their length is patched once their fields are written), so encoding a tree of objects copies nothing.
public final class PostboxEncoder {
    let buffer: ByteBuffer

    /// An empty encoder.
    public init() {
        buffer = ByteBuffer(capacity: 256)
    }

    /// Rewinds to an empty encoding, keeping the allocated memory.
    public func reset() { buffer.reset() }

    /// The number of bytes written so far.
    public var length: Int { buffer.count }

    /// Lends the bytes written so far (valid only inside `body`).
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(buffer.bytes)
    }

    /// A copy of the bytes written so far, as a buffer that can be stored in a `ValueBox`.
    public func makeReadBuffer() -> ReadBuffer { ReadBuffer(copying: buffer.bytes) }

    /// A copy of the bytes written so far.
    public func makeArray() -> [UInt8] { Array(buffer.bytes) }

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
        writeObject(hash: PostboxTypeRegistry.shared.hash(of: type(of: value))) { value.encode(self) }
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

    /// Encodes `value` as a root object into a new buffer.
    public static func encodeRoot(_ value: any PostboxCoding) -> ReadBuffer {
        let encoder = PostboxEncoder()
        encoder.encodeRootObject(value)
        return encoder.makeReadBuffer()
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
        let hash = PostboxTypeRegistry.shared.hash(of: T.self)
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
