import Foundation

/// Registers `type` so that objects written with its type hash decode polymorphically (as
/// `any PostboxCoding`), using `f` to build the value. Postbox's `declareEncodable`.
///
/// The type hash is MurmurHash3 x86_32 (seed −137723950) of the UTF-8 bytes of `T.postboxTypeName`.
/// Registering the same type again replaces its factory; registering a different type whose hash collides
/// is a programming error and traps with both names.
public func declareEncodable<T: PostboxCoding>(_ type: T.Type, f: @escaping @Sendable (PostboxDecoder) throws(PostboxDecodingError) -> T) {
    PostboxTypeRegistry.shared.register(type, factory: { decoder throws(PostboxDecodingError) in try f(decoder) })
}

/// Registers `type` with its own `init(decoder:)` as the factory.
public func declareEncodable<T: PostboxCoding>(_ type: T.Type) {
    declareEncodable(type, f: { decoder throws(PostboxDecodingError) in try T(decoder: decoder) })
}

/// The type hash written for values of `type`.
public func postboxTypeHash(of type: any PostboxCoding.Type) -> Int32 {
    PostboxTypeRegistry.shared.hash(of: type)
}

/// The process-wide table of type hashes and decoding factories. Reads and writes take one lock; the hash of a
/// type is computed once and cached by metatype, so encoding does not re-hash type names.
final class PostboxTypeRegistry: @unchecked Sendable {
    typealias Factory = @Sendable (PostboxDecoder) throws(PostboxDecodingError) -> any PostboxCoding

    static let shared = PostboxTypeRegistry()

    /// Reserved for anonymous objects (the keyed containers of the Codable bridge); no type may hash to it.
    static let anonymousTypeHash: Int32 = 0

    private struct Entry {
        let typeName: String
        let type: Any.Type
        let factory: Factory
    }

    private let lock = NSLock()
    private var factories: [Int32: Entry] = [:]
    private var hashes: [ObjectIdentifier: Int32] = [:]

    func register(_ type: any PostboxCoding.Type, factory: @escaping Factory) {
        let name = type.postboxTypeName
        let hash = Self.computeHash(name)
        lock.lock()
        defer { lock.unlock() }
        if let existing = factories[hash], existing.type != type {
            preconditionFailure("declareEncodable: \(name) and \(existing.typeName) have the same type hash \(hash)")
        }
        factories[hash] = Entry(typeName: name, type: type, factory: factory)
        hashes[ObjectIdentifier(type)] = hash
    }

    func hash(of type: any PostboxCoding.Type) -> Int32 {
        let id = ObjectIdentifier(type)
        lock.lock()
        if let hash = hashes[id] {
            lock.unlock()
            return hash
        }
        lock.unlock()
        let hash = Self.computeHash(type.postboxTypeName)
        lock.lock()
        hashes[id] = hash
        lock.unlock()
        return hash
    }

    func factory(for hash: Int32) -> Factory? {
        lock.lock()
        defer { lock.unlock() }
        return factories[hash]?.factory
    }

    static func computeHash(_ name: String) -> Int32 {
        let hash = Int32(bitPattern: MurmurHash3.hash32(name, seed: MurmurHash3.postboxSeed))
        precondition(hash != anonymousTypeHash, "postboxTypeName \"\(name)\" hashes to the reserved type hash 0")
        return hash
    }
}
