import Boxwood
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import Testing
import BoxwoodStore

/// A store in front of a real Postbox that refuses the transactions a test chooses, the way the engine refuses a
/// write on a full disk: the transaction's body runs, then `BoxwoodError.io(ENOSPC)` is thrown inside it, so the
/// Postbox rolls back everything the body did.
final class FailingStore: SyncStore, @unchecked Sendable {
    enum Mode {
        /// Transactions that move the account's cursor (the replay of a batch that changes it) fail.
        case cursorWrites
        /// Every transaction fails, reads included.
        case everyTransaction
    }

    /// What a refused transaction throws (28 is ENOSPC on Linux and Darwin).
    static let diskFull = BoxwoodError.io(operation: "pwrite", path: "/simulated/wal", errno: 28)

    let postbox: Postbox
    private let lock = NSLock()
    private var mode: Mode?
    private var refused = 0

    init(_ postbox: Postbox) { self.postbox = postbox }

    /// Starts refusing the transactions of `mode` (nil: none).
    func fail(_ mode: Mode?) { lock.withLock { self.mode = mode } }

    /// Transactions refused so far.
    var refusedTransactions: Int { lock.withLock { refused } }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) async throws -> T {
        let mode = lock.withLock { self.mode }
        return try await postbox.transaction { transaction in
            let cursorBefore = try transaction.getState() as? SyncAccountState
            let result = try body(transaction)
            switch mode {
            case nil:
                return result
            case .cursorWrites:
                guard try transaction.getState() as? SyncAccountState != cursorBefore else { return result }
            case .everyTransaction:
                break
            }
            self.lock.withLock { self.refused += 1 }
            throw FailingStore.diskFull
        }
    }
}

/// Issue 21, item 4: a storage failure during sync is an error, not "nothing to do". With a store that refuses
/// transactions in front of the Postbox, the sync call throws the typed failure, the event stream reports it, the
/// stored cursor does not move — and once the store works again, sync resumes and reaches the server's state.
@Suite("Sync storage failures", .timeLimit(.minutes(2)))
struct SyncStorageFailureTests {
    struct Fixture {
        let server: SimulatedServer
        let directory: SyncTemporaryDirectory
        let postbox: Postbox
        let store: FailingStore
        let client: SyncClient
    }

    static func fixture(seed: UInt64) async throws -> Fixture {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: seed, users: 4, groups: 1, channels: 1, secretChats: 1, initialHistory: 3...12,
            differenceSliceSize: 50, channelTooLongThreshold: 200, faults: .none))
        let directory = SyncTemporaryDirectory()
        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: directory.path + "/db")
        let store = FailingStore(postbox)
        let client = SyncClient(postbox: postbox, store: store, transport: server, accountPeerId: server.accountPeerId,
                                configuration: .fast)
        return Fixture(server: server, directory: directory, postbox: postbox, store: store, client: client)
    }

    /// The next storage failure on the event stream (other events are skipped); nil when the stream ends.
    static func nextStorageFailure(_ events: inout AsyncStream<SyncEvent>.Iterator) async -> SyncStorageError? {
        while let event = await events.next() {
            if case let .storageFailed(failure) = event { return failure }
        }
        return nil
    }

    static func storedCursor(_ postbox: Postbox) async throws -> SyncAccountState? {
        try await SyncInspector.read(postbox, peerIds: []).cursor
    }

    /// `synchronize()` throws `expected` (a typed ``SyncError``, not a silent return).
    static func expectSynchronize(_ manager: AccountStateManager, throws expected: SyncError,
                                  sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await manager.synchronize()
            Issue.record("synchronize() returned instead of throwing \(expected)", sourceLocation: sourceLocation)
        } catch {
            #expect(error == expected, sourceLocation: sourceLocation)
        }
    }

    /// The store works again: one sync call (and the client settling) brings the account to the server's state.
    static func expectRecovery(_ fixture: Fixture) async throws {
        fixture.store.fail(nil)
        try await fixture.client.manager.synchronize()
        await fixture.client.waitUntilQuiet()
        let report = try await ConsistencyCheck.check(fixture.postbox, server: fixture.server)
        #expect(report.isConsistent, "\(report)")
        try await fixture.client.stop()
    }

    @Test("a refused commit reaches the caller and the event stream; sync resumes when the store works again")
    func refusedCommitSurfacesAndSyncResumes() async throws {
        let fixture = try await Self.fixture(seed: 21)
        let manager = fixture.client.manager
        var events = manager.events.makeAsyncIterator()
        let refused = SyncStorageError(.replayBatch, cause: .engine(FailingStore.diskFull))

        // The first sync is a reset from the dialog list: its pages are stored, its closing commit (the one that
        // writes the cursor) is refused.
        fixture.store.fail(.cursorWrites)
        await Self.expectSynchronize(manager, throws: .storage(refused))
        #expect(await Self.nextStorageFailure(&events) == refused)
        #expect(fixture.store.refusedTransactions == 1)
        #expect(try await Self.storedCursor(fixture.postbox) == nil, "nothing of the refused batch is stored")
        let statistics = await manager.statistics
        #expect(statistics.dialogPages >= 1 && statistics.commits == statistics.dialogPages,
                "only the pages, which write no cursor, are stored")

        try await Self.expectRecovery(fixture)
    }

    @Test("pushed updates whose read is refused are reported, held, and caught up once the store works again")
    func refusedPushesSurfaceAndSyncResumes() async throws {
        let fixture = try await Self.fixture(seed: 22)
        let manager = fixture.client.manager
        var events = manager.events.makeAsyncIterator()
        try await fixture.client.start()
        try await manager.synchronize()
        await fixture.client.waitUntilQuiet()
        let cursor = try await Self.storedCursor(fixture.postbox)
        #expect(cursor != nil)

        // Traffic while the database refuses everything: the pushes are not stored, the failure is reported.
        fixture.store.fail(.everyTransaction)
        fixture.server.generate(events: 12)
        let failure = await Self.nextStorageFailure(&events)
        #expect(failure?.cause == .engine(FailingStore.diskFull))
        await Self.expectSynchronize(manager, throws: .storage(SyncStorageError(.readCursors, cause: .engine(FailingStore.diskFull))))
        #expect(try await Self.storedCursor(fixture.postbox) == cursor, "the cursor moved while the store refused writes")

        try await Self.expectRecovery(fixture)
    }

    @Test("a refused hole fill is reported on the event stream, and the hole is filled once the store works again")
    func refusedHoleFillIsReported() async throws {
        let fixture = try await Self.fixture(seed: 24)
        var events = fixture.client.manager.events.makeAsyncIterator()
        try await fixture.client.start()
        try await fixture.client.manager.synchronize()
        await fixture.client.waitUntilQuiet()

        // A history view shows the holes the first sync left below each chat's newest message: the filler fetches
        // them, and the database refuses to store the page.
        fixture.store.fail(.everyTransaction)
        let peerId = try #require(fixture.server.snapshot().chatStates.keys.sorted().first)
        var views = fixture.postbox.view(.messageHistory(peerId: peerId, namespace: SyncNamespaces.cloudMessages, count: 20)).makeAsyncIterator()
        let failure = await Self.nextStorageFailure(&events)
        #expect(failure == SyncStorageError(.fillHole, cause: .engine(FailingStore.diskFull)))

        // After its cooldown the hole is fetched again and stored.
        fixture.store.fail(nil)
        while let view = try await views.next() {
            if view.holes.isEmpty { break }
        }
        try await Self.expectRecovery(fixture)
        // Counted when the fill's operation ends, after the view saw its commit.
        #expect(await fixture.client.manager.statistics.holesFilled >= 1)
    }

    @Test("synchronize() after stop() throws stopped")
    func synchronizeAfterStopThrowsStopped() async throws {
        let fixture = try await Self.fixture(seed: 23)
        try await fixture.client.stop()
        await Self.expectSynchronize(fixture.client.manager, throws: .stopped)
    }
}
