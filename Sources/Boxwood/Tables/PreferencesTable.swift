import BoxwoodStore
/// A change of the preferences table in a transaction.
public enum PreferencesOperation {
    /// `key` was set to `entry`.
    case update(key: ValueBoxKey, entry: any PreferencesEntry)
    /// `key` was removed.
    case remove(key: ValueBoxKey)

    public var key: ValueBoxKey {
        switch self {
        case let .update(key, _), let .remove(key): return key
        }
    }
}

/// App and account settings (table 35, binary keys): an app-chosen binary key → the root-encoded
/// `PreferencesEntry` (a type registered with `declareEncodable`, or a ``CodableEntry``).
///
/// Write-back: reads see this transaction's values, ``beforeCommit()`` writes them.
final class PreferencesTable: Table {
    static let tableId: Int32 = 35
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary)

    private var cache = WriteBackCache<ValueBoxKey, any PreferencesEntry>()
    private let encoder = PostboxEncoder()

    /// Every set and remove of this transaction, in order.
    private(set) var operations: [PreferencesOperation] = []

    var updatedKeys: Set<ValueBoxKey> { Set(operations.map(\.key)) }

    func resetChanges() {
        operations.removeAll()
    }

    /// Throws when the library's `CodableEntry` cannot be registered (an app type took its name).
    init(valueBox: ValueBox, useCaches: Bool = true) throws(PostboxTypeRegistrationError) {
        try LibraryCodingTypes.ensureRegistered()
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    func get(_ key: ValueBoxKey) throws -> (any PreferencesEntry)? {
        if let known = cache.lookup(key) { return known }
        let entry = try valueBox.rootObject(table, key: key, as: (any PreferencesEntry).self)
        cache.remember(key, entry)
        return entry
    }

    /// Sets (or with nil removes) the entry of `key` (written at the end of the transaction). Keys are checked
    /// against `ValueBox/maxKeySize` at once.
    func set(_ key: ValueBoxKey, entry: (any PreferencesEntry)?) throws {
        if key.length > ValueBox.maxKeySize {
            throw BoxwoodError.keyTooLarge(length: key.length, limit: ValueBox.maxKeySize)
        }
        cache.set(key, entry)
        if let entry {
            operations.append(.update(key: key, entry: entry))
        } else {
            operations.append(.remove(key: key))
        }
    }

    /// Every entry in key order, this transaction's changes included; `body` returns false to stop.
    func enumerate(_ body: (ValueBoxKey, any PreferencesEntry) throws -> Bool) throws {
        var keys = Set<ValueBoxKey>()
        try valueBox.scan(table, keys: { keys.insert($0); return true })
        keys.formUnion(cache.dirty)
        for key in keys.sorted() {
            if let entry = try get(key) {
                if try !body(key, entry) { return }
            }
        }
    }

    override func clearMemoryCache() {
        cache.removeAll()
    }

    override func beforeCommit() throws {
        try cache.flush(keepValues: useCaches) { key, entry in
            if let entry {
                try valueBox.setRootObject(table, key: key, entry, encoder: encoder)
            } else {
                try valueBox.remove(table, key: key)
            }
        }
    }
}
