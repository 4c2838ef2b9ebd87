import Boxwood

/// Where the sync layer reads and writes: transactions on the account's database. A ``Postbox`` is the store; the
/// protocol is the seam through which a test puts a failing store in front of it, to prove the sync layer
/// surfaces what the database refuses (``SyncStorageError``) instead of taking it for "nothing to do", and through
/// which ``SyncClient`` fences the sync engine's transactions to the master client (``SyncMasterFence``).
public protocol SyncStore: Sendable {
    /// Runs `body` in one transaction and returns its result (see ``Postbox/transaction(_:)``). When anything
    /// throws, nothing `body` did is stored and the error is rethrown. What the app asks for (sending, reading,
    /// editing) runs here.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T

    /// Runs `body` in one transaction of the sync engine: reading the cursors a request starts from, replaying a
    /// batch, storing a fill or an outbound answer. Like ``transaction(_:)``, unless the store fences them (a
    /// store of a ``SyncClient`` refuses them once another client took over the database).
    func engineTransaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T
}

extension SyncStore {
    public func engineTransaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try await transaction(body)
    }
}

extension Postbox: SyncStore {}

extension SyncStore {
    /// Runs `body` in one engine transaction of `operation`; whatever it or the database throws is a
    /// ``SyncStorageError`` of that operation.
    func run<T: Sendable>(_ operation: SyncStorageError.Operation,
                          _ body: @escaping @Sendable (Transaction) throws -> T) async throws(SyncStorageError) -> T {
        do {
            return try await engineTransaction(body)
        } catch {
            throw SyncStorageError(operation, error: error)
        }
    }
}
