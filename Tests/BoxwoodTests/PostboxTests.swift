import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// Collects the change records an observer receives (the observer runs on the Postbox queue).
final class ChangeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [PostboxChanges] = []

    func append(_ changes: PostboxChanges) { lock.lock(); stored.append(changes); lock.unlock() }
    var records: [PostboxChanges] { lock.lock(); defer { lock.unlock() }; return stored }
}

struct PostboxTestError: Error {}

@Suite struct PostboxTests {
    init() throws {
        try registerTestTypes()
        try registerTableTestTypes()
    }

    func temporaryPath(_ tag: String) -> String {
        NSTemporaryDirectory() + "bw-postbox-\(tag)-\(UUID().uuidString)"
    }

    @Test func transactionsPersistAndRecordExactlyWhatChanged() async throws {
        let path = temporaryPath("changes")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let log = ChangeLog()
        let token = postbox.addTransactionObserver { log.append($0) }
        let alice = TestUser(id: peer(0, 1), firstName: "Alice", lastName: "A", username: "alice")
        let bob = TestUser(id: peer(0, 2), firstName: "Bob", lastName: "B", username: nil)

        try await postbox.transaction { tx in
            try tx.updatePeers([alice, bob])
            try tx.setState(TestAccountState(pts: 10, qts: 1, date: 100, seq: 3))
            try tx.replaceContactPeerIds([alice.id])
        }
        // A transaction that only reads changes nothing: no record, no version bump.
        let state = try await postbox.transaction { tx in (try tx.getState() as? TestAccountState)?.pts }
        #expect(state == 10)
        try await postbox.transaction { tx in
            try tx.updatePeers([TestUser(id: alice.id, firstName: "Alice", lastName: "Changed", username: "alice")])
            try tx.operationLogAddEntry(peerId: bob.id, tag: PeerOperationLogTag(1), tagMergedIndex: .automatic,
                                        contents: TestOperation(payload: 7))
        }
        let records = log.records
        #expect(records.count == 2)
        #expect(Set(records[0].updatedPeers.keys) == [alice.id, bob.id])
        #expect((records[0].updatedState as? TestAccountState)?.pts == 10)
        #expect(records[0].replacedContactPeerIds == [alice.id])
        #expect(records[0].peerMergedOperationLogOperations.isEmpty)
        #expect(Set(records[1].updatedPeers.keys) == [alice.id])
        #expect((records[1].updatedPeers[alice.id] as? TestUser)?.lastName == "Changed")
        #expect(records[1].updatedState == nil && records[1].replacedContactPeerIds == nil)
        #expect(records[1].peerMergedOperationLogOperations.count == 1)
        #expect(postbox.transactionStateVersion == 2)
        postbox.removeTransactionObserver(token)
        try await postbox.close()

        let reopened = try await Postbox.open(path: path)
        let (name, contacts, version, queued) = try await reopened.transaction { tx in
            ((try tx.getPeer(alice.id) as? TestUser)?.lastName, try tx.getContactPeerIds(),
             try tx.postbox.tables.metadata.transactionStateVersion(),
             try tx.getMergedOperationLogEntries(tag: PeerOperationLogTag(1), fromIndex: 0, limit: 10).count)
        }
        #expect(name == "Changed")
        #expect(contacts == [alice.id])
        #expect(version == 2)
        #expect(queued == 1)
        try await reopened.close()
    }

    @Test func aThrowingTransactionLeavesNothing() async throws {
        let path = temporaryPath("rollback")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let log = ChangeLog()
        _ = postbox.addTransactionObserver { log.append($0) }
        let carol = TestUser(id: peer(0, 3), firstName: "Carol", lastName: "C", username: nil)
        await #expect(throws: PostboxTestError.self) {
            try await postbox.transaction { tx in
                try tx.updatePeers([carol])
                try tx.setPreferencesEntry(key: ValueBoxKey("pref"), value: nil)
                try tx.operationLogAddEntry(peerId: carol.id, tag: PeerOperationLogTag(2), tagMergedIndex: .automatic,
                                            contents: TestOperation(payload: 1))
                throw PostboxTestError()
            }
        }
        #expect(log.records.isEmpty)
        let (stored, queued) = try await postbox.transaction { tx in
            (try tx.getPeer(carol.id) == nil,
             try tx.getMergedOperationLogEntries(tag: PeerOperationLogTag(2), fromIndex: 0, limit: 10).count)
        }
        #expect(stored)
        #expect(queued == 0)
        #expect(log.records.isEmpty)
        try await postbox.close()
    }

    @Test func aTransactionThatEscapesItsClosureCannotBeUsed() async throws {
        let path = temporaryPath("escape")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        final class Box: @unchecked Sendable { var transaction: Transaction? }
        let box = Box()
        try await postbox.transaction { tx in box.transaction = tx }
        #expect(throws: PostboxError.transactionEnded) { _ = try box.transaction?.getState() }
        try await postbox.close()
        await #expect(throws: PostboxError.closed) { try await postbox.transaction { _ in } }
    }

    @Test func upgradesRunInOrderEachAllOrNothing() async throws {
        let path = temporaryPath("upgrade")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let dave = TestUser(id: peer(0, 4), firstName: "Dave", lastName: "D", username: nil)
        do {
            let v1 = try await Postbox.open(path: path, userVersion: 1)
            try await v1.transaction { tx in try tx.updatePeers([dave]) }
            try await v1.close()
        }
        // A step that fails leaves the database at its version, with its data.
        let failing = [PostboxUpgrade(from: 1, to: 2) { tx in
            try tx.updatePeers([TestUser(id: dave.id, firstName: "Half", lastName: "Done", username: nil)])
            throw PostboxTestError()
        }]
        await #expect(throws: PostboxTestError.self) { _ = try await Postbox.open(path: path, userVersion: 2, upgrades: failing) }
        await #expect(throws: PostboxError.noUpgradePath(from: 1, to: 3)) {
            _ = try await Postbox.open(path: path, userVersion: 3, upgrades: [PostboxUpgrade(from: 2, to: 3) { _ in }])
        }
        let steps = ChangeLog()
        let upgrades = [
            PostboxUpgrade(from: 2, to: 3) { tx in
                let peer = try tx.getPeer(dave.id) as? TestUser
                try tx.updatePeers([TestUser(id: dave.id, firstName: peer!.firstName, lastName: peer!.lastName + "+3", username: nil)])
            },
            PostboxUpgrade(from: 1, to: 2) { tx in
                #expect(try tx.getUserVersion() == 1)
                let peer = try tx.getPeer(dave.id) as? TestUser
                #expect(peer?.firstName == "Dave")
                try tx.updatePeers([TestUser(id: dave.id, firstName: "Dave", lastName: peer!.lastName + "+2", username: nil)])
            },
        ]
        let v3 = try await Postbox.open(path: path, userVersion: 3, upgrades: upgrades)
        _ = v3.addTransactionObserver { steps.append($0) }
        let (version, name) = try await v3.transaction { tx in (try tx.getUserVersion(), (try tx.getPeer(dave.id) as? TestUser)?.lastName) }
        #expect(version == 3)
        #expect(name == "D+2+3")
        try await v3.close()
        await #expect(throws: PostboxError.newerUserVersion(found: 3, supported: 2)) { _ = try await Postbox.open(path: path, userVersion: 2) }
    }

    @Test func anotherInstanceSeesCommitsAfterItsCachesAreDropped() async throws {
        let path = temporaryPath("external")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let app = try await Postbox.open(path: path)
        let fileExtension = try await Postbox.open(path: path, useCaches: false)
        let eve = TestUser(id: peer(0, 5), firstName: "Eve", lastName: "E", username: nil)
        try await app.transaction { tx in try tx.updatePeers([eve]) }
        // The app caches Eve; the extension changes her.
        _ = try await app.transaction { tx in try tx.getPeer(eve.id) }
        try await fileExtension.transaction { tx in
            try tx.updatePeers([TestUser(id: eve.id, firstName: "Eve", lastName: "From extension", username: nil)])
            try tx.becomeMasterClient()
        }
        let log = ChangeLog()
        _ = app.addTransactionObserver { log.append($0) }
        let (name, master) = try await app.transaction { tx in ((try tx.getPeer(eve.id) as? TestUser)?.lastName, try tx.isMasterClient()) }
        #expect(name == "From extension")
        #expect(master == false)
        #expect(log.records.count == 1 && log.records[0].sawExternalCommits && log.records[0].isEmpty)
        let extensionIsMaster = try await fileExtension.transaction { tx in try tx.isMasterClient() }
        #expect(extensionIsMaster)
        try await app.transaction { tx in try tx.becomeMasterClient() }
        #expect(try await fileExtension.transaction { tx in try tx.isMasterClient() } == false)
        try await app.close()
        try await fileExtension.close()
    }
}
