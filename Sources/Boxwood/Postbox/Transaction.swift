/// The handle a transaction closure works through (Postbox's `Transaction`). Valid only inside its closure,
/// on the Postbox queue: after the transaction ends every method throws ``PostboxError/transactionEnded``.
public final class Transaction {
    let postbox: Postbox
    private var isEnded = false

    init(postbox: Postbox) {
        self.postbox = postbox
    }

    func end() { isEnded = true }

    /// The tables, after checking that the transaction is still running.
    var tables: PostboxTables {
        get throws {
            if isEnded { throw PostboxError.transactionEnded }
            return postbox.tables
        }
    }

    // MARK: State and master client

    /// The account state (the sync layer's cursor: pts, qts, date, seq), nil before the first `setState`.
    public func getState() throws -> (any PostboxCoding)? { try tables.metadata.state() }

    public func setState(_ state: any PostboxCoding) throws { try tables.metadata.setState(state) }

    /// The database's user (schema) version.
    /// The TransactionStateVersion: incremented by every non-empty transaction of any process.
    public func getTransactionStateVersion() throws -> Int64 { try tables.metadata.transactionStateVersion() }

    public func getUserVersion() throws -> Int32? { try tables.metadata.userVersion() }

    /// Makes this Postbox the master client (durably and for every process; Postbox's
    /// `becomeMasterClient`). Nothing changes when it already is.
    public func becomeMasterClient() throws {
        let tables = try self.tables
        let valueBox = postbox.valueBox
        guard valueBox.masterClientId != valueBox.sessionClientId else { return }
        try valueBox.becomeMasterClient()
        try tables.metadata.setMasterClientId(valueBox.sessionClientId)
    }

    /// True when this Postbox is the master client.
    public func isMasterClient() throws -> Bool {
        _ = try tables
        return postbox.valueBox.isMasterClient
    }
}
