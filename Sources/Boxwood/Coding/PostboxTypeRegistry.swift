import Foundation

/// Registers `type` so that objects written with its type hash decode polymorphically (as
/// `any PostboxCoding`), using `f` to build the value. Postbox's `declareEncodable`.
///
/// The type hash is MurmurHash3 x86_32 (seed −137723950) of the UTF-8 bytes of `T.postboxTypeName`. Register
/// every type your app stores polymorphically once at start-up, before the first transaction that reads it.
/// Registering the same type again replaces its factory. A different type whose hash is already registered
/// (another type with the same `postboxTypeName`, or a MurmurHash3 collision) throws
/// ``PostboxTypeRegistrationError/hashCollision(type:registered:hash:)`` naming both; a name that hashes to 0
/// throws ``PostboxTypeRegistrationError/reservedHash(type:)``. A refused call registers nothing.
public func declareEncodable<T: PostboxCoding>(_ type: T.Type, f: @escaping @Sendable (PostboxDecoder) throws(PostboxDecodingError) -> T) throws(PostboxTypeRegistrationError) {
    try PostboxTypeRegistry.shared.register(type, factory: { decoder throws(PostboxDecodingError) in try f(decoder) })
}

/// Registers `type` with its own `init(decoder:)` as the factory (see ``declareEncodable(_:f:)``).
public func declareEncodable<T: PostboxCoding>(_ type: T.Type) throws(PostboxTypeRegistrationError) {
    try declareEncodable(type, f: { decoder throws(PostboxDecodingError) in try T(decoder: decoder) })
}

/// The type hash written for values of `type`: the MurmurHash3 of its ``PostboxCoding/postboxTypeName``. 0 means
/// the name is unusable (the hash reserved for anonymous objects; registering or encoding the type fails).
public func postboxTypeHash(of type: any PostboxCoding.Type) -> Int32 {
    PostboxTypeRegistry.shared.hash(of: type)
}

/// The process-wide table of type hashes and decoding factories. Reads and writes take one lock; the hash of a
/// type is computed once and cached by metatype, so encoding does not re-hash type names. Every type whose hash
/// was computed (by registration or by encoding) is remembered by hash, so that decoding an unregistered type
/// can name it.
final class PostboxTypeRegistry: @unchecked Sendable {
    typealias Factory = @Sendable (PostboxDecoder) throws(PostboxDecodingError) -> any PostboxCoding

    static let shared = PostboxTypeRegistry()

    /// Reserved for anonymous objects (the keyed containers of the Codable bridge); no type may hash to it.
    static let anonymousTypeHash: Int32 = 0

    private struct Registration {
        let type: Any.Type
        let factory: Factory
    }

    private let lock = NSLock()
    private var registrations: [Int32: Registration] = [:]
    private var hashes: [ObjectIdentifier: Int32] = [:]
    /// The name of each hash this process registered (always the registered type) or encoded (the first type
    /// seen), for errors.
    private var knownTypes: [Int32: PostboxTypeIdentity] = [:]

    func register(_ type: any PostboxCoding.Type, factory: @escaping Factory) throws(PostboxTypeRegistrationError) {
        let identity = PostboxTypeIdentity(type)
        let hash = Self.computeHash(identity.typeName)
        guard hash != Self.anonymousTypeHash else { throw .reservedHash(type: identity) }
        lock.lock()
        defer { lock.unlock() }
        if let existing = registrations[hash], existing.type != type, let registered = knownTypes[hash] {
            throw .hashCollision(type: identity, registered: registered, hash: hash)
        }
        registrations[hash] = Registration(type: type, factory: factory)
        hashes[ObjectIdentifier(type)] = hash
        knownTypes[hash] = identity
    }

    /// The type hash of `type` (0 when its name hashes to the reserved value; the encoder refuses that).
    func hash(of type: any PostboxCoding.Type) -> Int32 {
        let id = ObjectIdentifier(type)
        lock.lock()
        if let hash = hashes[id] {
            lock.unlock()
            return hash
        }
        lock.unlock()
        let identity = PostboxTypeIdentity(type)
        let hash = Self.computeHash(identity.typeName)
        lock.lock()
        hashes[id] = hash
        if hash != Self.anonymousTypeHash, knownTypes[hash] == nil { knownTypes[hash] = identity }
        lock.unlock()
        return hash
    }

    func factory(for hash: Int32) -> Factory? {
        lock.lock()
        defer { lock.unlock() }
        return registrations[hash]?.factory
    }

    /// The type this process registered or encoded with `hash`, if any.
    func knownType(for hash: Int32) -> PostboxTypeIdentity? {
        lock.lock()
        defer { lock.unlock() }
        return knownTypes[hash]
    }

    static func computeHash(_ name: String) -> Int32 {
        Int32(bitPattern: MurmurHash3.hash32(name, seed: MurmurHash3.postboxSeed))
    }
}
