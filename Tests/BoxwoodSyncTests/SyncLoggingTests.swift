import Boxwood
import BoxwoodStore
@testable import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import InMemoryLogging
import Logging
import Testing

/// A transport that answers `getDialogs` with a timeout `failures` times before passing it to `server`.
final class FlakyDialogsTransport: SyncTransport, @unchecked Sendable {
    let server: SimulatedServer
    private let lock = NSLock()
    private var failuresLeft: Int

    init(_ server: SimulatedServer, failures: Int) {
        self.server = server
        failuresLeft = failures
    }

    func getState() async throws(SyncTransportError) -> ApiUpdatesState { try await server.getState() }
    func getDifference(pts: Int32, qts: Int32, date: Int32, ptsTotalLimit: Int32) async throws(SyncTransportError) -> ApiDifference {
        try await server.getDifference(pts: pts, qts: qts, date: date, ptsTotalLimit: ptsTotalLimit)
    }
    func getChannelDifference(channelId: PeerId, pts: Int32, limit: Int32) async throws(SyncTransportError) -> ApiChannelDifference {
        try await server.getChannelDifference(channelId: channelId, pts: pts, limit: limit)
    }
    func getDialogs(offset: ApiDialogsOffset?, limit: Int32) async throws(SyncTransportError) -> ApiDialogs {
        let fail = lock.withLock { () -> Bool in
            defer { failuresLeft -= 1 }
            return failuresLeft > 0
        }
        if fail { throw .timeout }
        return try await server.getDialogs(offset: offset, limit: limit)
    }
    func getPeerDialogs(peers: [PeerId]) async throws(SyncTransportError) -> ApiDialogs {
        try await server.getPeerDialogs(peers: peers)
    }
    func getHistory(peerId: PeerId, offsetId: Int32, addOffset: Int32, limit: Int32, maxId: Int32, minId: Int32) async throws(SyncTransportError) -> [ApiMessage] {
        try await server.getHistory(peerId: peerId, offsetId: offsetId, addOffset: addOffset, limit: limit, maxId: maxId, minId: minId)
    }
    func sendMessage(peerId: PeerId, text: String, randomId: Int64, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiUpdates {
        try await server.sendMessage(peerId: peerId, text: text, randomId: randomId, mutation: mutation)
    }
    func readHistory(peerId: PeerId, maxId: Int32, mutation: ClientMutationId) async throws(SyncTransportError) -> ApiAffectedMessages {
        try await server.readHistory(peerId: peerId, maxId: maxId, mutation: mutation)
    }
    func connect() async -> AsyncStream<SyncPushEvent> { await server.connect() }
}

/// Issue 23, item 5: the errors the sync layer handles without rethrowing are logged (swift-log, label
/// `org.boxwood.sync`) with their metadata. The handler is installed through the layer's logger factory for the
/// time of the test, not by bootstrapping the whole test process; the factory is global, so the tests that install
/// one run one at a time.
@Suite("Sync logging", .serialized, .timeLimit(.minutes(2)))
struct SyncLoggingTests {
    /// What one log call of the sync layer said.
    struct Entry {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    /// Runs `body` with every logger of the sync layer logging, at every level, into one in-memory handler; returns
    /// what they logged.
    static func capturing(_ body: () async throws -> Void) async rethrows -> [Entry] {
        var handler = InMemoryLogHandler()
        handler.logLevel = .trace
        try await SyncLog.factory.withHandler({ [handler] _ in handler }, body)
        return handler.entries.map { Entry(level: $0.level, message: $0.message.description, metadata: $0.metadata.mapValues(\.description)) }
    }

    @Test("a storage failure the manager reports on its events is logged as an error with its operation and cause")
    func storageFailureIsLogged() async throws {
        let fixture = try await SyncStorageFailureTests.fixture(seed: 2301)
        let entries = await Self.capturing {
            fixture.store.fail(.cursorWrites)
            await #expect(throws: SyncError.self) { try await fixture.client.manager.synchronize() }
        }
        // Other suites running meanwhile may log into the handler too: look for this client's failure.
        let account = "\(fixture.server.accountPeerId)"
        let logged = entries.first { $0.level == .error && $0.metadata["operation"] == "replayBatch" && $0.metadata["account"] == account }
        #expect(logged != nil, "\(entries)")
        #expect(SyncLog.label == "org.boxwood.sync")
        #expect(logged?.message.contains("sync storage failed") == true)
        #expect(logged?.metadata["error"]?.contains("/simulated/wal") == true, "\(String(describing: logged))")
        try await SyncStorageFailureTests.expectRecovery(fixture)
    }

    @Test("a request that keeps failing is logged at debug, and as a warning every few failures in a row")
    func retriedRequestIsLogged() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: 2302, users: 2, groups: 1, channels: 0, secretChats: 0, initialHistory: 1...3,
            differenceSliceSize: 50, channelTooLongThreshold: 200, faults: .none))
        let directory = SyncTemporaryDirectory()
        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: directory.path + "/db")
        let transport = FlakyDialogsTransport(server, failures: AccountStateManager.failuresPerWarning)
        let client = SyncClient(postbox: postbox, transport: transport, accountPeerId: server.accountPeerId, configuration: .fast)
        let entries = try await Self.capturing {
            try await client.manager.synchronize()
        }
        // Other suites running meanwhile may log into the handler too: look for this client's five failures.
        let retries = entries.filter {
            $0.message.contains("request failed") && $0.metadata["operation"] == "getDialogs"
                && $0.metadata["account"] == "\(server.accountPeerId)" && $0.metadata["error"] == "timeout"
        }
        for attempt in 1...AccountStateManager.failuresPerWarning {
            let logged = retries.filter { $0.metadata["attempt"] == "\(attempt)" }
            let level: Logger.Level = attempt == AccountStateManager.failuresPerWarning ? .warning : .debug
            #expect(!logged.isEmpty && logged.allSatisfy { $0.level == level }, "attempt \(attempt): \(retries)")
        }
        try await client.stop()
    }
}
