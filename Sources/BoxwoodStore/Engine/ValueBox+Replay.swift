/// Applying WAL records to the in-memory state: one record as its own transaction (`applyRecord`, for commits
/// another value box published), or every record of a recovery in one pager transaction (`RecoveryReplay`).
extension ValueBox {
    /// Applies the operations of one WAL record (`payload`, whose header said `operationCount`) to the open pager
    /// transaction. Leaves rolling back (or not) to the caller: a malformed operation, or a count that disagrees
    /// with the header, throws `.corrupted` after the operations before it were applied.
    func applyOperations(sequence: UInt64, operationCount: UInt32, payload: UnsafeRawBufferPointer, file: String) throws(BoxwoodError) {
        var reader = ByteReader(payload)
        var applied: UInt32 = 0
        while !reader.isAtEnd {
            let operation: WALOperation
            do throws(ByteReadError) { operation = try reader.operation() } catch {
                throw .corrupted(file: file, page: nil, reason: "malformed operation in WAL record \(sequence)")
            }
            try applyLogged(operation)
            applied += 1
        }
        guard applied == operationCount else {
            throw .corrupted(file: file, page: nil, reason: "WAL record \(sequence) holds \(applied) operations, header says \(operationCount)")
        }
    }

    /// Replays the records of a recovery (`recover` in ValueBox+Open.swift) into one pager transaction, committed
    /// by `finish`.
    ///
    /// Invariant that makes one transaction enough: nothing reads this state until the open that recovers it
    /// returns, and a record that fails fails that open — the error is thrown, the value box drops its pager and
    /// state (`init` releases the files, `reopen` leaves `failure` set and starts again from the files), so no
    /// record needs a rollback point of its own. Without per-record transactions a page made by one record is
    /// changed in place by the next instead of being copied again (`Pager.writable` copies a dirty page of an
    /// earlier transaction before changing it).
    func replayRecoveredRecord(sequence: UInt64, operationCount: UInt32, payload: UnsafeRawBufferPointer, file: String) throws(BoxwoodError) {
        try applyOperations(sequence: sequence, operationCount: operationCount, payload: payload, file: file)
        state.version = sequence
    }

    /// Commits the pages the recovered records made: they become the committed state's dirty pages, as after a
    /// commit, and the next checkpoint writes them.
    func finishRecoveryReplay() {
        pager.commitTransaction()
    }
}
