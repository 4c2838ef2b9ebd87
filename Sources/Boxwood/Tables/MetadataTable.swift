import BoxwoodStore
/// Postbox's metadata (table 0, int64 keys): the schema version, the account state, the
/// TransactionStateVersion and MasterClientId mirrors and the remote contact count.
///
/// Write-through. The account state and the remote contact count are cached in memory after the first read
/// (``clearMemoryCache()`` drops them); the version counters are always read from the value box, because they
/// are how another process's commits are noticed.
final class MetadataTable: Table {
    static let tableId: Int32 = 0
    static let descriptor = ValueBoxTable(id: tableId, keyType: .int64)

    /// The keys (Postbox's values; 5, the legacy access challenge, is not used).
    enum Key: Int64 {
        case userVersion = 1
        case state = 2
        case transactionStateVersion = 3
        case masterClientId = 4
        case remoteContactCount = 6
        /// The ``MasterClientProcess`` of the last `becomeMasterClient`: the MasterClientId it was recorded with.
        case masterProcessClientId = 7
        /// … and the packed identity (`ProcessIdentity.packed`) of the process that made it.
        case masterProcess = 8

        var key: ValueBoxKey { ValueBoxKey(int64: rawValue) }
    }

    private enum Cached<T> {
        case unknown
        case known(T)
    }

    private let encoder = PostboxEncoder()
    private var cachedState: Cached<(any PostboxCoding)?> = .unknown
    private var cachedRemoteContactCount: Cached<Int32> = .unknown

    // MARK: Changes in the current transaction

    /// The account state set in this transaction (the last one), if any.
    private(set) var updatedState: (any PostboxCoding)?
    /// The remote contact count set in this transaction, if any.
    private(set) var updatedRemoteContactCount: Int32?
    /// The MasterClientId set in this transaction, if any.
    private(set) var updatedMasterClientId: Int64?

    func resetChanges() {
        updatedState = nil
        updatedRemoteContactCount = nil
        updatedMasterClientId = nil
    }

    init(valueBox: ValueBox, useCaches: Bool = true) {
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    // MARK: User version

    /// The Postbox schema version, nil in a new database.
    func userVersion() throws -> Int32? {
        try valueBox.decodeInteger(table, key: Key.userVersion.key, as: Int32.self)
    }

    func setUserVersion(_ version: Int32) throws {
        try valueBox.setInt32(table, key: Key.userVersion.key, version)
    }

    // MARK: Account state

    /// The account state (a root-encoded object of an app type registered with `declareEncodable`).
    func state() throws -> (any PostboxCoding)? {
        if case let .known(state) = cachedState { return state }
        let state = try valueBox.rootObject(table, key: Key.state.key, as: (any PostboxCoding).self)
        cachedState = .known(state)
        return state
    }

    func setState(_ state: any PostboxCoding) throws {
        try valueBox.setRootObject(table, key: Key.state.key, state, encoder: encoder)
        cachedState = .known(state)
        updatedState = state
    }

    // MARK: Version counters

    /// The number of non-empty Postbox transactions (0 when never set).
    func transactionStateVersion() throws -> Int64 {
        try valueBox.decodeInteger(table, key: Key.transactionStateVersion.key, as: Int64.self) ?? 0
    }

    /// Adds one to the TransactionStateVersion and returns the new value.
    @discardableResult
    func incrementTransactionStateVersion() throws -> Int64 {
        let version = try transactionStateVersion() &+ 1
        try valueBox.setInt64(table, key: Key.transactionStateVersion.key, version)
        return version
    }

    /// The session id of the process that claimed master (0 when never set).
    func masterClientId() throws -> Int64 {
        try valueBox.decodeInteger(table, key: Key.masterClientId.key, as: Int64.self) ?? 0
    }

    func setMasterClientId(_ id: Int64) throws {
        try valueBox.setInt64(table, key: Key.masterClientId.key, id)
        updatedMasterClientId = id
    }

    /// The process recorded by the last ``setMasterProcess(_:)``, nil when none was.
    func masterProcess() throws -> MasterClientProcess? {
        guard let clientId = try valueBox.decodeInteger(table, key: Key.masterProcessClientId.key, as: Int64.self),
              let identity = try valueBox.decodeInteger(table, key: Key.masterProcess.key, as: Int64.self) else { return nil }
        return MasterClientProcess(clientId: clientId, packedIdentity: UInt64(bitPattern: identity))
    }

    func setMasterProcess(_ process: MasterClientProcess) throws {
        try valueBox.setInt64(table, key: Key.masterProcessClientId.key, process.clientId)
        try valueBox.setInt64(table, key: Key.masterProcess.key, Int64(bitPattern: process.packedIdentity))
    }

    // MARK: Remote contact count

    /// The number of contacts the server reported (0 when never set).
    func remoteContactCount() throws -> Int32 {
        if case let .known(count) = cachedRemoteContactCount { return count }
        let count = try valueBox.decodeInteger(table, key: Key.remoteContactCount.key, as: Int32.self) ?? 0
        cachedRemoteContactCount = .known(count)
        return count
    }

    func setRemoteContactCount(_ count: Int32) throws {
        try valueBox.setInt32(table, key: Key.remoteContactCount.key, count)
        cachedRemoteContactCount = .known(count)
        updatedRemoteContactCount = count
    }

    // MARK: Hooks

    override func clearMemoryCache() {
        cachedState = .unknown
        cachedRemoteContactCount = .unknown
    }

    override func beforeCommit() throws {
        if !useCaches { clearMemoryCache() }
    }
}
