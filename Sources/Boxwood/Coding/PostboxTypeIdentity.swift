/// The two names of a stored type: the stable ``PostboxCoding/postboxTypeName`` whose hash is written to disk,
/// and the Swift type (`String(reflecting:)`, module-qualified, e.g. `"MyApp.Fruit.Title"`) that declared it.
/// Registration and decoding errors name types with it.
public struct PostboxTypeIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The type's ``PostboxCoding/postboxTypeName``.
    public let typeName: String
    /// The Swift type, module-qualified (`String(reflecting:)`).
    public let swiftType: String

    /// The identity of `typeName` declared by `swiftType`.
    public init(typeName: String, swiftType: String) {
        self.typeName = typeName
        self.swiftType = swiftType
    }

    /// The identity of `type`.
    public init(_ type: any PostboxCoding.Type) {
        self.init(typeName: type.postboxTypeName, swiftType: String(reflecting: type))
    }

    /// `"Title" (MyApp.Fruit.Title)`.
    public var description: String { "\"\(typeName)\" (\(swiftType))" }
}
