import BoxwoodStore
extension PostboxDecoder {
    /// The object whose header starts at `offset`: its type hash and a decoder over its body.
    @inline(__always) func objectPayload(at offset: Int, key: String) throws(PostboxDecodingError) -> (hash: Int32, decoder: PostboxDecoder) {
        let object = try reader.object(at: offset, limit: end)
        return (object.hash, child(object.body))
    }

    /// Decodes the object at `offset` through the type registry.
    func registeredObject(at offset: Int, key: String) throws(PostboxDecodingError) -> any PostboxCoding {
        let (hash, decoder) = try objectPayload(at: offset, key: key)
        guard let factory = PostboxTypeRegistry.shared.factory(for: hash) else {
            throw .unknownType(hash: hash, key: key, knownType: PostboxTypeRegistry.shared.knownType(for: hash))
        }
        return try factory(decoder)
    }

    /// Decodes the object at `offset` as `T`, ignoring its stored type hash.
    @inline(__always) func typedObject<T: PostboxCoding>(at offset: Int, key: String, as type: T.Type) throws(PostboxDecodingError) -> T {
        try T(decoder: objectPayload(at: offset, key: key).decoder)
    }

    /// The object field `key`, decoded through the type registry (``declareEncodable(_:f:)``). Nil when the field
    /// is absent, `null` or not an object; throws when its type hash is not registered or its decoding fails.
    public func decodeObjectForKey(_ key: String) throws(PostboxDecodingError) -> (any PostboxCoding)? {
        guard let value = lookup(key), value.type == .object else { return nil }
        return try registeredObject(at: value.payload, key: key)
    }

    /// The object field `key` decoded as `T` with `T.init(decoder:)`; the stored type hash is not consulted, so
    /// `T` need not be registered. Nil when the field is absent, `null` or not an object.
    public func decodeObjectForKey<T: PostboxCoding>(_ key: String, as type: T.Type) throws(PostboxDecodingError) -> T? {
        guard let value = lookup(key), value.type == .object else { return nil }
        return try typedObject(at: value.payload, key: key, as: type)
    }

    /// The required object field `key` decoded as `T` (see ``decodeObjectForKey(_:as:)``).
    public func decodeObject<T: PostboxCoding>(forKey key: String, as type: T.Type) throws(PostboxDecodingError) -> T {
        try typedObject(at: required(key, .object).payload, key: key, as: type)
    }

    /// The root object (field `"_"`) decoded through the type registry.
    public func decodeRootObject() throws(PostboxDecodingError) -> any PostboxCoding {
        guard let value = lookup("_"), value.type == .object else { throw .missingRootObject }
        return try registeredObject(at: value.payload, key: "_")
    }

    /// The root object (field `"_"`) decoded as `T`.
    public func decodeRootObject<T: PostboxCoding>(as type: T.Type) throws(PostboxDecodingError) -> T {
        guard let value = lookup("_"), value.type == .object else { throw .missingRootObject }
        return try typedObject(at: value.payload, key: "_", as: type)
    }

    /// Decodes the root object of `buffer` through the type registry.
    public static func decodeRoot(from buffer: MemoryBuffer) throws(PostboxDecodingError) -> any PostboxCoding {
        try PostboxDecoder(buffer: buffer).decodeRootObject()
    }

    /// Decodes the root object of `buffer` as `T`.
    public static func decodeRoot<T: PostboxCoding>(from buffer: MemoryBuffer, as type: T.Type) throws(PostboxDecodingError) -> T {
        try PostboxDecoder(buffer: buffer).decodeRootObject(as: type)
    }

    // MARK: Object arrays and dictionaries

    /// Calls `body` with the offset of each element object of the object array at `offset`.
    func forEachObject(inArrayAt offset: Int, perElement: Int, _ body: (Int) throws(PostboxDecodingError) -> Void) throws(PostboxDecodingError) {
        let count = try reader.length(at: offset, limit: end, elementSize: 8 * perElement)
        var p = offset + 4
        for _ in 0..<(count * perElement) {
            try body(p)
            p = try reader.object(at: p, limit: end).body.upperBound
        }
    }

    /// The object array field `key`, each element decoded as `T` (type hashes are not consulted). Empty when
    /// the field is absent, `null` or not an object array.
    public func decodeObjectArrayForKey<T: PostboxCoding>(_ key: String, as type: T.Type) throws(PostboxDecodingError) -> [T] {
        guard let value = lookup(key), value.type == .objectArray else { return [] }
        var result: [T] = []
        try forEachObject(inArrayAt: value.payload, perElement: 1) { offset throws(PostboxDecodingError) in
            result.append(try typedObject(at: offset, key: key, as: type))
        }
        return result
    }

    /// The object array field `key`, each element decoded through the type registry. An element whose type hash
    /// is not registered throws, or is left out when `skippingUnknownTypes` (useful for lists that newer app
    /// versions may extend with new types, such as message attributes).
    public func decodeObjectArrayForKey(_ key: String, skippingUnknownTypes: Bool = false) throws(PostboxDecodingError) -> [any PostboxCoding] {
        guard let value = lookup(key), value.type == .objectArray else { return [] }
        var result: [any PostboxCoding] = []
        try forEachObject(inArrayAt: value.payload, perElement: 1) { offset throws(PostboxDecodingError) in
            do throws(PostboxDecodingError) {
                result.append(try registeredObject(at: offset, key: key))
            } catch {
                guard skippingUnknownTypes, case .unknownType = error else { throw error }
            }
        }
        return result
    }

    /// The object dictionary field `key`, keys decoded as `K` and values as `V`. Empty when the field is absent,
    /// `null` or not a dictionary. A repeated key keeps the last value.
    public func decodeObjectDictionaryForKey<K: PostboxCoding & Hashable, V: PostboxCoding>(_ key: String, keyType: K.Type, valueType: V.Type) throws(PostboxDecodingError) -> [K: V] {
        guard let value = lookup(key), value.type == .objectDictionary else { return [:] }
        var result: [K: V] = [:]
        var pendingKey: K?
        try forEachObject(inArrayAt: value.payload, perElement: 2) { offset throws(PostboxDecodingError) in
            if let entryKey = pendingKey {
                result[entryKey] = try typedObject(at: offset, key: key, as: valueType)
                pendingKey = nil
            } else {
                pendingKey = try typedObject(at: offset, key: key, as: keyType)
            }
        }
        return result
    }
}
