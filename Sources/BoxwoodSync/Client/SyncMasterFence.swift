import Boxwood
import Foundation

/// Which process may sync a database, when ``SyncClient/start(mastership:)`` asks.
public enum SyncMastership: Sendable, Hashable {
    /// Become the master client whatever the state (the app coming to the foreground: Telegram's main app calls
    /// `becomeMasterClient` when it becomes active). A client of another process that was syncing stops at its
    /// next transaction.
    case takeOver
    /// Become the master client only when no running process is (an extension, or a second window): refused with
    /// ``SyncError/masterElsewhere(processId:)`` while the master's process runs; taken when the master resigned,
    /// when its process ended (killed, crashed) or when no process was recorded with its claim.
    case ifVacant
}

/// Thrown inside a fenced engine transaction when this Postbox is no longer the master client; the transaction
/// stores nothing.
struct SyncMastershipLost: Error, CustomStringConvertible {
    /// Who holds the database now.
    let holder: MasterClientState

    var description: String { "another client is the master (\(holder))" }
}

/// The sync engine's fence (the invariant a shared database rests on: **only the master client's sync engine
/// writes sync state**). Once armed, every engine transaction first checks, inside the transaction, that this
/// Postbox is still the master client; a claim by another process is a commit, and commits are serialized, so no
/// engine transaction of a client that lost the claim commits after the claim. The first refusal is reported once
/// to `onLost` (the client then stops its parts).
final class SyncMasterFence: @unchecked Sendable {
    private struct State {
        var armed = false
        var lost = false
        var onLost: (@Sendable (MasterClientState) -> Void)?
    }

    /// Guards `state`.
    private let lock = NSLock()
    private var state = State()

    /// Starts fencing; `onLost` is called once, at the first engine transaction that finds another master.
    func arm(onLost: @escaping @Sendable (MasterClientState) -> Void) {
        lock.withLock {
            state.armed = true
            state.lost = false
            state.onLost = onLost
        }
    }

    /// Stops fencing (the client resigned or stopped).
    func disarm() {
        lock.withLock {
            state.armed = false
            state.onLost = nil
        }
    }

    var isArmed: Bool { lock.withLock { state.armed } }

    /// Throws ``SyncMastershipLost`` when armed and `transaction`'s Postbox is not the master client.
    func check(_ transaction: Transaction) throws {
        guard isArmed else { return }
        let holder = try transaction.masterClientState()
        guard holder != .this else { return }
        throw SyncMastershipLost(holder: holder)
    }

    /// Reports a refusal: to `onLost`, the first time only.
    func reportLost(_ holder: MasterClientState) {
        let handler: (@Sendable (MasterClientState) -> Void)? = lock.withLock {
            guard state.armed, !state.lost else { return nil }
            state.lost = true
            return state.onLost
        }
        handler?(holder)
    }
}

/// A store whose engine transactions are fenced by a ``SyncMasterFence``; the app's transactions are not (a
/// process that does not sync may still queue a message: the master's outbound queue sends it).
struct SyncMasterFencedStore: SyncStore {
    let base: any SyncStore
    let fence: SyncMasterFence

    func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        try await base.transaction(body)
    }

    func engineTransaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        let fence = fence
        do {
            return try await base.engineTransaction { transaction in
                try fence.check(transaction)
                return try body(transaction)
            }
        } catch let lost as SyncMastershipLost {
            fence.reportLost(lost.holder)
            throw lost
        }
    }
}
