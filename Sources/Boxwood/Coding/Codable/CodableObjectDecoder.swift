/// The `Decoder` a ``PostboxCodable`` value reads itself from: the fields of the object being decoded are its
/// keyed container, and a value that is not keyed (a single value or an unkeyed container) is the field `"_"`.
/// The mirror of ``CodableNode/writeAsObjectFields(to:)``.
final class CodableObjectDecoder: Decoder {
    let fields: PostboxDecoder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(fields: PostboxDecoder) {
        self.fields = fields
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(AdaptedKeyedDecodingContainer<Key>(fields: fields, codingPath: []))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try AdaptedPostboxDecoder(slot: wholeValueSlot).unkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        AdaptedSingleValueDecodingContainer(slot: wholeValueSlot)
    }

    /// The field `"_"` (null when absent), where a value that is not keyed is stored.
    private var wholeValueSlot: CodableSlot {
        let value = fields.lookup(CodableNode.wholeValueKey) ?? FieldValue(type: .null, payload: 0)
        return CodableSlot(region: fields, value: value, codingPath: [])
    }
}
