import BoxwoodStore

extension ExitStatus {
    /// The exit code for an engine error: 2 for bad input (a key or table id the engine refuses, a path that is
    /// not a database), 3 for a damaged database, 4 for a lock or reader slot another process holds, 1 for
    /// everything else.
    static func `for`(_ error: BoxwoodError) -> Int32 {
        switch error {
        case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .reservedTableId, .outOfBounds, .notABoxwoodDatabase:
            return badInput
        case .corrupted, .checksumMismatch:
            return damaged
        case .lockTimeout, .readerSlotsFull, .incompatibleLockScheme:
            return locked
        default:
            return failure
        }
    }

    /// The exit code for an error opening a database: like ``for(_:)``, except that a path that is not a
    /// database is 1 (a missing database is "not found", as with every other command), not 2.
    static func forOpening(_ error: BoxwoodError) -> Int32 {
        if case .notABoxwoodDatabase = error { return failure }
        return self.for(error)
    }
}
