import Foundation
import Testing
@testable import Boxwood

extension ViewCostTests {
    /// The cost of `updateViews` with 100 live peer views (all components) when a transaction changes a
    /// presence none of them shows and when it changes the presence one shows (printed, not asserted;
    /// `BOXWOOD_VIEW_BENCH=1` for more rounds, in a release build).
    @Test func updateViewsCostWithAHundredPeerViews() async throws {
        try registerViewTestTypes()
        let rounds = ProcessInfo.processInfo.environment["BOXWOOD_VIEW_BENCH"] != nil ? 20_000 : 300
        let path = NSTemporaryDirectory() + "bw-peer-view-cost-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path)
        let peers = (1...100).map { peer(0, Int64($0)) }
        try await postbox.transaction { tx in
            try tx.updatePeers(peers.map { TestUser(id: $0, firstName: "P\($0.id)", lastName: "", username: nil) })
            try tx.updatePeerPresences(Dictionary(uniqueKeysWithValues: peers.map { ($0, TestPresence(lastSeen: 1)) }))
        }
        let result = try await postbox.onQueue { () -> (none: Double, one: Double) in
            try postbox.runTransaction { tx in
                for id in peers { _ = try postbox.viewTracker.add(keys: [.peer(id, components: .all)], tables: try tx.tables) { _ in } }
            }
            let tables = postbox.tables
            var untouched = PostboxChanges()
            untouched.updatedPeerPresences = [peer(0, 999): TestPresence(lastSeen: 2)]
            // Alternating values, so that the view changes every round.
            var touched = [PostboxChanges(), PostboxChanges()]
            touched[0].updatedPeerPresences = [peers[0]: TestPresence(lastSeen: 2)]
            touched[1].updatedPeerPresences = [peers[0]: TestPresence(lastSeen: 3)]
            func time(_ changes: [PostboxChanges]) throws -> Double {
                try postbox.valueBox.beginRead()
                defer { postbox.valueBox.endRead() }
                let start = ContinuousClock.now
                for round in 0..<rounds { postbox.viewTracker.updateViews(tables: tables, changes: changes[round % changes.count]) }
                return (ContinuousClock.now - start) / .seconds(1) / Double(rounds)
            }
            return (try time([untouched]), try time(touched))
        }
        print("updateViews with 100 live peer views: \(Int(result.none * 1e9)) ns when the transaction touches none, \(Int(result.one * 1e9)) ns when it changes one's presence (\(rounds) rounds)")
        #expect(postbox.liveViewCount == 100)
        try await postbox.close()
    }
}
