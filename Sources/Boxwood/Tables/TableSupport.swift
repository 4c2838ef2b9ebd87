import BoxwoodStore
/// Helpers shared by the Postbox-layer tables: key builders, reading and writing hand-laid values, root-object values,
/// and the write-back cache.

// MARK: Keys

extension ValueBoxKey {
    /// The key of a peer in an `int64` table.
    @inline(__always) static func peerId(_ id: PeerId) -> ValueBoxKey {
        ValueBoxKey(int64: id.toInt64())
    }

    /// This key followed by one zero byte: the least key greater than this one (keys compare as memcmp, shorter
    /// first), so it is an exclusive bound that includes this key.
    var immediateSuccessor: ValueBoxKey {
        var extra = ValueBoxKey(length: 1)
        extra.setUInt8(0, value: 0)
        return self + extra
    }

    /// `self` followed by `count` 0xFF bytes: with `count` longer than any suffix the table uses, an exclusive
    /// upper bound for every key that starts with `self` (the successor of a prefix can wrap around).
    func paddedWithFF(_ count: Int) -> ValueBoxKey {
        var result = ValueBoxKey(length: length + count)
        withUnsafeBytes { result.setBytes(0, $0) }
        for i in 0..<count { result.setUInt8(length + i, value: 0xFF) }
        return result
    }
}

extension ValueBox {
    /// The first key of `table` in the range (exclusive bounds, descending when `start > end`); nil when none.
    func firstKey(_ table: ValueBoxTable, start: ValueBoxKey, end: ValueBoxKey) throws -> ValueBoxKey? {
        var found: ValueBoxKey?
        try range(table, start: start, end: end, keys: { key in
            found = key
            return false
        }, limit: 1)
        return found
    }
}

// MARK: Raw values

extension MemoryBuffer {
    /// Reads this hand-laid table value with `read`. A read that fails (the value is shorter than its layout, has
    /// a byte the layout does not define, or bytes after its end where `read` requires none) throws `corrupt()`:
    /// the table's own error, which names what is damaged.
    func read<R>(orThrow corrupt: @autoclosure () -> HistoryTableError,
                 _ read: (inout ByteReader) throws(ByteReadError) -> R) throws(HistoryTableError) -> R {
        do throws(ByteReadError) {
            return try withBytes { (bytes) throws(ByteReadError) in
                var reader = ByteReader(bytes)
                return try read(&reader)
            }
        } catch {
            throw corrupt()
        }
    }
}

extension ValueBox {
    /// Reads the hand-laid value of `key` with `read` straight from the stored bytes (`withValue`: lent, not copied,
    /// unless the value is compressed or spans overflow pages); nil when absent. A read that fails throws
    /// `corrupt()`, as ``MemoryBuffer/read(orThrow:_:)`` does. `read` must not keep the reader's bytes.
    func readValue<R>(_ table: ValueBoxTable, key: ValueBoxKey, orThrow corrupt: @autoclosure () -> HistoryTableError,
                      _ read: (inout ByteReader) throws(ByteReadError) -> R) throws -> R? {
        let result: Result<R, ByteReadError>? = try withValue(table, key: key) { bytes in
            var reader = ByteReader(bytes)
            do throws(ByteReadError) {
                return .success(try read(&reader))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case nil: return nil
        case .success(let value)?: return value
        case .failure?: throw corrupt()
        }
    }

    /// Decodes the value of `key` with `decode` straight from the stored bytes (no copy); nil when absent.
    func decodeValue<T>(_ table: ValueBoxTable, key: ValueBoxKey,
                        _ decode: (UnsafeRawBufferPointer) throws(PostboxDecodingError) -> T) throws -> T? {
        let result: Result<T, PostboxDecodingError>? = try withValue(table, key: key) { bytes in
            do throws(PostboxDecodingError) {
                return .success(try decode(bytes))
            } catch {
                return .failure(error)
            }
        }
        return try result?.get()
    }

    /// The value of `key` when it is exactly one little-endian `T` (a value of another length throws
    /// ``PostboxDecodingError/invalidLength(_:offset:)``); nil when absent.
    func decodeInteger<T: FixedWidthInteger>(_ table: ValueBoxTable, key: ValueBoxKey, as type: T.Type) throws -> T? {
        try decodeValue(table, key: key) { (bytes) throws(PostboxDecodingError) in
            guard bytes.count == MemoryLayout<T>.size else { throw .invalidLength(Int64(bytes.count), offset: 0) }
            do throws(ByteReadError) { return try ByteReader(bytes).integer(at: 0) } catch { throw PostboxDecodingError(error) }
        }
    }

    /// Stores a value given as an array (an empty marker value, or test bytes).
    func set(_ table: ValueBoxTable, key: ValueBoxKey, bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in try set(table, key: key, bytes: raw) }
    }

    /// Stores the bytes of a hand-laid value.
    func set(_ table: ValueBoxTable, key: ValueBoxKey, value: ByteBuffer) throws {
        try value.withBytes { (bytes) throws(BoxwoodError) in try set(table, key: key, bytes: bytes) }
    }

    /// Stores `value` as 4 little-endian bytes.
    func setInt32(_ table: ValueBoxTable, key: ValueBoxKey, _ value: Int32) throws {
        var le = value.littleEndian
        try withUnsafeBytes(of: &le) { (bytes) throws(BoxwoodError) in try set(table, key: key, bytes: bytes) }
    }

    /// Stores `value` as 8 little-endian bytes.
    func setInt64(_ table: ValueBoxTable, key: ValueBoxKey, _ value: Int64) throws {
        var le = value.littleEndian
        try withUnsafeBytes(of: &le) { (bytes) throws(BoxwoodError) in try set(table, key: key, bytes: bytes) }
    }

    /// Stores the bytes an encoder wrote; throws the encoder's ``PostboxEncoder/encodingError`` instead (storing
    /// nothing) when a value failed to encode.
    func set(_ table: ValueBoxTable, key: ValueBoxKey, encoder: PostboxEncoder) throws {
        try encoder.throwIfEncodingFailed()
        try encoder.withBytes { raw throws(BoxwoodError) in try self.set(table, key: key, bytes: raw) }
    }

    /// Stores the root encoding of `object` (field `"_"`), using `encoder` as scratch space; throws (storing
    /// nothing) when `object` fails to encode.
    func setRootObject(_ table: ValueBoxTable, key: ValueBoxKey, _ object: any PostboxCoding, encoder: PostboxEncoder) throws {
        encoder.reset()
        encoder.encodeRootObject(object)
        try set(table, key: key, encoder: encoder)
    }

    /// Decodes the root object of the value of `key` through the type registry and casts it to `T`
    /// (usually an existential such as `any Peer`); nil when absent.
    func rootObject<T>(_ table: ValueBoxTable, key: ValueBoxKey, as type: T.Type) throws -> T? {
        try decodeValue(table, key: key) { (bytes) throws(PostboxDecodingError) -> T in
            try decodeRootObject(bytes, as: type)
        }
    }
}

/// Decodes the root object of an encoded buffer through the type registry and casts it to `T`.
func decodeRootObject<T>(_ bytes: UnsafeRawBufferPointer, as type: T.Type) throws(PostboxDecodingError) -> T {
    let object = try PostboxDecoder.withDecoder(over: bytes) { decoder throws(PostboxDecodingError) in
        try decoder.decodeRootObject()
    }
    guard let value = object as? T else {
        throw .unexpectedType(key: "_", expected: String(describing: type), found: String(describing: Swift.type(of: object)))
    }
    return value
}

/// Registers the library's own storable types that tables may meet as polymorphic values (a `CodableEntry`
/// stored as a preference or ordered-list item, a `SharedMediaReference` in a stored message's media list).
/// Idempotent; a refused registration (an app type that took one of their names) is thrown by every call.
enum LibraryCodingTypes {
    private static let registration: Result<Void, PostboxTypeRegistrationError> = {
        do throws(PostboxTypeRegistrationError) {
            try declareEncodable(CodableEntry.self)
            try declareEncodable(SharedMediaReference.self)
            return .success(())
        } catch {
            return .failure(error)
        }
    }()

    static func ensureRegistered() throws(PostboxTypeRegistrationError) { try registration.get() }
}

// MARK: Write-back cache

/// The values a write-back table has read or been given in memory, and which of them still have to be written.
/// `nil` values mean "known to be absent" (a negative cache entry, or a pending removal).
struct WriteBackCache<Key: Hashable, Value> {
    private(set) var entries: [Key: Value?] = [:]
    private(set) var dirty: Set<Key> = []

    /// `.some(value)` when the key's value (or absence) is known in memory, nil when it must be read.
    @inline(__always) func lookup(_ key: Key) -> Value?? { entries[key] }

    /// Remembers a value read from the value box.
    mutating func remember(_ key: Key, _ value: Value?) {
        entries.updateValue(value, forKey: key)
    }

    /// Sets a value (nil: removes) to be written by the next flush.
    mutating func set(_ key: Key, _ value: Value?) {
        entries.updateValue(value, forKey: key)
        dirty.insert(key)
    }

    var hasDirty: Bool { !dirty.isEmpty }

    /// Writes every dirty value with `write` (the dirty set is emptied only once all writes succeeded), then
    /// forgets everything unless `keepValues`.
    mutating func flush(keepValues: Bool, _ write: (Key, Value?) throws -> Void) throws {
        for key in dirty {
            if let value = entries[key] { try write(key, value) }
        }
        dirty.removeAll()
        if !keepValues { entries.removeAll() }
    }

    /// Forgets every value, dirty ones included.
    mutating func removeAll() {
        entries.removeAll()
        dirty.removeAll()
    }
}
