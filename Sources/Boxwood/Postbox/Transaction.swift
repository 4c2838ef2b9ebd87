import BoxwoodPlatform

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
    /// The process that makes the claim is recorded with it (``masterClientState()`` tells whether it still runs).
    public func becomeMasterClient() throws {
        let tables = try self.tables
        let valueBox = postbox.valueBox
        guard valueBox.masterClientId != valueBox.sessionClientId else { return }
        try valueBox.becomeMasterClient()
        try tables.metadata.setMasterClientId(valueBox.sessionClientId)
        try tables.metadata.setMasterProcess(MasterClientProcess(clientId: valueBox.sessionClientId,
                                                                 packedIdentity: ProcessIdentity.current.packed))
    }

    /// Gives up being the master client (the MasterClientId becomes 0, for every process). Nothing changes when
    /// this Postbox is not the master: another one took over, and its claim stays.
    public func resignMasterClient() throws {
        let tables = try self.tables
        let valueBox = postbox.valueBox
        guard valueBox.masterClientId == valueBox.sessionClientId else { return }
        try valueBox.resignMasterClient()
        try tables.metadata.setMasterClientId(0)
    }

    /// Who the master client is and, when it is another Postbox, whether the process that claimed it still runs.
    /// Read inside a transaction, the answer holds until it ends: a claim by another process is a commit, and
    /// commits are serialized.
    public func masterClientState() throws -> MasterClientState {
        let tables = try self.tables
        let valueBox = postbox.valueBox
        let master = valueBox.masterClientId
        if master == 0 { return .none }
        if master == valueBox.sessionClientId { return .this }
        guard let process = try tables.metadata.masterProcess(), process.clientId == master else { return .unrecorded }
        let identity = ProcessIdentity(packed: process.packedIdentity)
        return identity.isAlive ? .running(processId: identity.pid) : .ended(processId: identity.pid)
    }

    /// True when this Postbox is the master client.
    public func isMasterClient() throws -> Bool {
        _ = try tables
        return postbox.valueBox.isMasterClient
    }
}
