import BoxwoodStore
extension PostboxDecoder {
    /// Reads `count` fixed-size little-endian elements after the Int32 count at `offset`.
    @inline(__always) private func fixedWidthArray<T: FixedWidthInteger>(at offset: Int, as type: T.Type) -> [T]? {
        let size = MemoryLayout<T>.size
        guard let count = try? reader.length(at: offset, limit: end, elementSize: size) else { return nil }
        let source = reader.base + offset + 4
        return [T](unsafeUninitializedCapacity: count) { storage, initialized in
            for i in 0..<count {
                storage[i] = T(littleEndian: source.loadUnaligned(fromByteOffset: i * size, as: T.self))
            }
            initialized = count
        }
    }

    /// Calls `body` with the bytes of each element of a string or bytes array at `offset`.
    private func forEachLengthPrefixed(at offset: Int, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        guard let count = try? reader.length(at: offset, limit: end, elementSize: 4) else { return false }
        var p = offset + 4
        for _ in 0..<count {
            guard let bytes = rawBytes(at: p) else { return false }
            body(bytes)
            p += 4 + bytes.count
        }
        return true
    }

    /// The Int32 array field `key`, or nil when absent or of another type.
    public func decodeOptionalInt32ArrayForKey(_ key: String) -> [Int32]? {
        guard let value = lookup(key), value.type == .int32Array else { return nil }
        return fixedWidthArray(at: value.payload, as: Int32.self)
    }

    /// The Int32 array field `key`, or an empty array when absent or of another type.
    public func decodeInt32ArrayForKey(_ key: String) -> [Int32] {
        decodeOptionalInt32ArrayForKey(key) ?? []
    }

    /// The Int64 array field `key`, or nil when absent or of another type.
    public func decodeOptionalInt64ArrayForKey(_ key: String) -> [Int64]? {
        guard let value = lookup(key), value.type == .int64Array else { return nil }
        return fixedWidthArray(at: value.payload, as: Int64.self)
    }

    /// The Int64 array field `key`, or an empty array when absent or of another type.
    public func decodeInt64ArrayForKey(_ key: String) -> [Int64] {
        decodeOptionalInt64ArrayForKey(key) ?? []
    }

    /// The String array field `key`, or nil when absent or of another type.
    public func decodeOptionalStringArrayForKey(_ key: String) -> [String]? {
        guard let value = lookup(key), value.type == .stringArray else { return nil }
        var result: [String] = []
        guard forEachLengthPrefixed(at: value.payload, { result.append(String(decoding: $0, as: UTF8.self)) }) else { return nil }
        return result
    }

    /// The String array field `key`, or an empty array when absent or of another type.
    public func decodeStringArrayForKey(_ key: String) -> [String] {
        decodeOptionalStringArrayForKey(key) ?? []
    }

    /// Copies of the byte buffers of the bytes array field `key`, or an empty array when absent or of another type.
    public func decodeBytesArrayForKey(_ key: String) -> [ReadBuffer] {
        guard let value = lookup(key), value.type == .bytesArray else { return [] }
        var result: [ReadBuffer] = []
        guard forEachLengthPrefixed(at: value.payload, { result.append(ReadBuffer(copying: $0)) }) else { return [] }
        return result
    }
}
