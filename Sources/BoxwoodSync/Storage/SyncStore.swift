import Boxwood

/// Where the sync layer reads and writes: transactions on the account's database. A ``Postbox`` is the store; the
/// protocol is the seam through which a test puts a failing store in front of it, to prove the sync layer
/// surfaces what the database refuses (``SyncStorageError``) instead of taking it for "nothing to do".
public protocol SyncStore: Sendable {
    /// Runs `body` in one transaction and returns its result (see ``Postbox/transaction(_:)``). When anything
    /// throws, nothing `body` did is stored and the error is rethrown.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T
}

extension Postbox: SyncStore {}

extension SyncStore {
    /// Runs `body` in one transaction of `operation`; whatever it or the database throws is a
    /// ``SyncStorageError`` of that operation.
    func run<T: Sendable>(_ operation: SyncStorageError.Operation,
                          _ body: @escaping @Sendable (Transaction) throws -> T) async throws(SyncStorageError) -> T {
        do {
            return try await transaction(body)
        } catch {
            throw SyncStorageError(operation, error: error)
        }
    }
}
