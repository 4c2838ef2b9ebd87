/// Write buffers of layers above the engine (the full-text index): a layer may keep writes of the open
/// transaction in memory and write them into its engine tables in one go. Invariant (kept here and in
/// `commit()`/`endTransaction()`/`rollBackTransaction()`): a buffer exists only inside a write transaction;
/// `commit()` flushes every buffer before it writes the WAL record, and a transaction that ends any other way
/// (abort, failed commit, close) drops them, so buffered writes commit and abort exactly with the transaction.
@_spi(EngineTables)
public protocol TransactionBuffer: AnyObject {
    /// Writes the buffered changes into `box` (the transaction is open; ordinary writes are allowed). A throw
    /// makes `commit()` throw with the transaction still open: the caller should then abort it.
    func flush(into box: ValueBox) throws(BoxwoodError)
}

extension ValueBox {
    /// The buffer registered under `id` in the open transaction, nil when none is (or outside a transaction).
    @_spi(EngineTables)
    public func transactionBuffer(_ id: Int64) -> (any TransactionBuffer)? {
        transactionBuffers[id]
    }

    /// Registers `buffer` under `id` for the open write transaction (replacing any other); `commit()` will
    /// flush it. Throws like a write outside a transaction.
    @_spi(EngineTables)
    public func setTransactionBuffer(_ id: Int64, _ buffer: any TransactionBuffer) throws(BoxwoodError) {
        try checkWritable()
        transactionBuffers[id] = buffer
    }

    /// Flushes the buffer registered under `id`, if any, and forgets it once the flush succeeded (a buffer whose
    /// flush threw stays registered, so that a later `commit()` flushes it again and throws again rather than
    /// commit without its writes).
    @_spi(EngineTables)
    public func flushTransactionBuffer(_ id: Int64) throws(BoxwoodError) {
        guard let buffer = transactionBuffers[id] else { return }
        try buffer.flush(into: self)
        transactionBuffers[id] = nil
    }

    /// Flushes every buffer, in id order (called by `commit()` before the WAL record is written).
    func flushTransactionBuffers() throws(BoxwoodError) {
        for id in transactionBuffers.keys.sorted() {
            try flushTransactionBuffer(id)
        }
    }
}
