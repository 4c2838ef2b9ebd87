extension PostboxEncoder {
    /// Writes an `Encodable` value as the field `key` (Postbox's `AdaptedPostboxEncoder`): a keyed container
    /// becomes an object with type hash 0, an unkeyed container a value array, a single value the matching
    /// scalar field. Throws only if the value's own `encode(to:)` throws.
    public func encodeCodable<T: Encodable>(_ value: T, forKey key: String) throws(PostboxEncodingError) {
        let node: CodableNode
        do {
            node = try AdaptedPostboxEncoder.node(for: value, codingPath: [])
        } catch {
            throw .codable(String(describing: error))
        }
        node.write(asFieldNamed: key, to: self)
    }

    /// Writes `value`'s fields into the object being encoded (``PostboxCodable``'s layout). When `value`'s
    /// `encode(to:)` throws, nothing is written and the error is recorded (``encodingError``).
    func encodeCodableFields<T: Encodable>(of value: T) {
        let node: CodableNode
        do {
            node = try AdaptedPostboxEncoder.node(for: value, codingPath: [])
        } catch {
            recordEncodingError(.codable("\(String(reflecting: T.self)): \(error)"))
            return
        }
        node.writeAsObjectFields(to: self)
    }
}

extension PostboxDecoder {
    /// Reads the field `key` as a `Decodable` value; nil when the field is absent or `null`. Missing optional
    /// properties read as nil and unknown ones are ignored, so Codable types evolve like `PostboxCoding` ones.
    /// A value that does not fit the type throws ``PostboxDecodingError/codable(_:)``.
    public func decodeCodable<T: Decodable>(_ type: T.Type, forKey key: String) throws(PostboxDecodingError) -> T? {
        guard let value = lookup(key), value.type != .null else { return nil }
        do {
            return try CodableSlot(region: self, value: value, codingPath: []).decodable(type)
        } catch let error as PostboxDecodingError {
            throw error
        } catch {
            throw .codable(String(describing: error))
        }
    }
}

extension PostboxDecoder {
    /// Reads a `Decodable` value from this object's fields (``PostboxCodable``'s layout). A value that does not
    /// fit the type throws ``PostboxDecodingError/codable(_:)``.
    func decodeCodableFields<T: Decodable>(_ type: T.Type) throws(PostboxDecodingError) -> T {
        do {
            return try T(from: CodableObjectDecoder(fields: self))
        } catch let error as PostboxDecodingError {
            throw error
        } catch {
            throw .codable("\(String(reflecting: T.self)): \(error)")
        }
    }
}
