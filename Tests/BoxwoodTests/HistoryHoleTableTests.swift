import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

@Suite struct HistoryHoleTableTests {
    let p1 = peer(1)
    let top = Int32.max - 1

    private func holes(_ t: MessageHistoryTables, _ peerId: PeerId, _ ns: MessageId.Namespace = 0, _ space: MessageHistoryHoleSpace = .everywhere) throws -> [ClosedRange<Int32>] {
        try t.holes.holes(peerId: peerId, namespace: ns, space: space)
    }

    @Test func mergeEdgeCases() throws {
        let f = try HistoryFixture("hole-merge")
        try f.transaction { t in
            let h = t.holes
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 10...20)
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 21...25)   // adjacent above
            #expect(try holes(t, p1) == [10...25])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 5...9)     // adjacent below
            #expect(try holes(t, p1) == [5...25])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 7...12)    // contained
            #expect(try holes(t, p1) == [5...25])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 30...40)   // separate (gap 26...29)
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 50...60)
            #expect(try holes(t, p1) == [5...25, 30...40, 50...60])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 20...55)   // bridges three
            #expect(try holes(t, p1) == [5...60])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 1...100)   // covers
            #expect(try holes(t, p1) == [1...100])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 102...102) // one-id gap stays
            #expect(try holes(t, p1) == [1...100, 102...102])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 101...101)
            #expect(try holes(t, p1) == [1...102])
        }
    }

    @Test func clippingAtTheEdges() throws {
        let f = try HistoryFixture("hole-clip")
        try f.transaction { t in
            let h = t.holes
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.min...0)   // nothing valid
            #expect(try holes(t, p1) == [])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: -5...3)
            #expect(try holes(t, p1) == [1...3])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: (Int32.max - 3)...Int32.max)
            #expect(try holes(t, p1) == [1...3, (Int32.max - 3)...top])
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.max...Int32.max)
            #expect(try holes(t, p1) == [1...3, (Int32.max - 3)...top])
            #expect(try h.containing(peerId: p1, namespace: 0, space: .everywhere, id: 1) == 1...3)
            #expect(try h.containing(peerId: p1, namespace: 0, space: .everywhere, id: top) == (Int32.max - 3)...top)
            #expect(try h.containing(peerId: p1, namespace: 0, space: .everywhere, id: Int32.max) == nil)
            #expect(try h.containing(peerId: p1, namespace: 0, space: .everywhere, id: 0) == nil)
            #expect(try h.containing(peerId: p1, namespace: 0, space: .everywhere, id: 4) == nil)
            // Remove at the edges.
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.min...1)
            #expect(try holes(t, p1) == [2...3, (Int32.max - 3)...top])
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: top...Int32.max)
            #expect(try holes(t, p1) == [2...3, (Int32.max - 3)...(top - 1)])
            // The whole valid range merges everything.
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.min...Int32.max)
            #expect(try holes(t, p1) == [1...top])
        }
    }

    @Test func removeSplitsAndSpacesAreSeparate() throws {
        let f = try HistoryFixture("hole-split")
        try f.transaction { t in
            let h = t.holes
            try h.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 1...100)
            try h.addHole(peerId: p1, namespace: 0, space: .tag(MessageTags(rawValue: 4)), range: 1...100)
            try h.addHole(peerId: p1, namespace: 1, space: .everywhere, range: 1...100)
            try h.addHole(peerId: peer(2), namespace: 0, space: .everywhere, range: 1...100)
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: 40...60)
            #expect(try holes(t, p1) == [1...39, 61...100])
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: 30...45)   // trims the lower one
            #expect(try holes(t, p1) == [1...29, 61...100])
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: 20...70)   // spans both
            #expect(try holes(t, p1) == [1...19, 71...100])
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: 1...19)    // exact
            #expect(try holes(t, p1) == [71...100])
            try h.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: 200...300) // outside
            #expect(try holes(t, p1) == [71...100])
            // Other spaces, namespaces and peers are untouched.
            #expect(try holes(t, p1, 0, .tag(MessageTags(rawValue: 4))) == [1...100])
            #expect(try holes(t, p1) == [71...100])
            #expect(try holes(t, p1, 1) == [1...100])
            #expect(try holes(t, peer(2)) == [1...100])
            #expect(try t.holes.spaces(peerId: p1, namespace: 0) == [.everywhere, .tag(MessageTags(rawValue: 4))])
            // Operations record what was asked (clipped) when it changed something.
            try t.holes.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 80...90)
            try t.holes.addHole(peerId: p1, namespace: 0, space: .everywhere, range: 95...Int32.max)
            let ops = t.holes.operations[MessageHistoryHoleOperationKey(peerId: p1, namespace: 0, space: .everywhere)]
            #expect(ops == [.insert(1...100), .remove(40...60), .remove(30...45), .remove(20...70), .remove(1...19), .insert(95...top)])
        }
        #expect(f.lastChanges.holeOperations.count == 4)
    }

    @Test func seedingAndUpperHistoryBlock() throws {
        var configuration = MessageHistoryConfiguration()
        let photo = MessageTags(rawValue: 1)
        configuration.messageHoles = [PeerId.Namespace(0): [0: [photo]]]
        let f = try HistoryFixture("hole-seed", configuration: configuration)
        let other = peer(5, namespace: 3)
        try f.transaction { t in
            try t.holes.ensureInitialized(p1)
            try t.holes.ensureInitialized(other)
            #expect(try holes(t, p1) == [1...top])
            #expect(try holes(t, p1, 0, .tag(photo)) == [1...top])
            #expect(try holes(t, p1, 1) == [])
            #expect(try holes(t, other) == [])
        }
        try f.transaction { t in
            // A page fetched at random does not touch holes…
            try t.history.addMessages([storeMessage(MessageId(peerId: p1, namespace: 0, id: 500), timestamp: 500)], location: .random)
            #expect(try holes(t, p1) == [1...top])
            // …an upper block removes everything from its lowest id up, in every space.
            try t.history.addMessages([storeMessage(MessageId(peerId: p1, namespace: 0, id: 1000), timestamp: 1000),
                                       storeMessage(MessageId(peerId: p1, namespace: 0, id: 900), timestamp: 900)], location: .upperHistoryBlock)
            #expect(try holes(t, p1) == [1...899])
            #expect(try holes(t, p1, 0, .tag(photo)) == [1...899])
        }
        // Seeding happens once: removing everything sticks across reopen.
        try f.transaction { t in
            try t.holes.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: 1...top)
        }
        try f.reopen()
        try f.transaction { t in
            try t.holes.ensureInitialized(p1)
            #expect(try holes(t, p1) == [])
            #expect(try holes(t, p1, 0, .tag(photo)) == [1...899])
        }
    }

    /// Random adds and removes on several (peer, namespace, space) keys against `MessageHistoryHoleRanges`, across
    /// commits, aborted transactions and reopens.
    @Test func randomizedAgainstRangesModel() throws {
        let seed = testSeed("HistoryHoleTableTests.randomizedAgainstRangesModel")
        var rng = SplitMix64(seed: seed)
        let f = try HistoryFixture("hole-random")
        let keys = [MessageHistoryHoleOperationKey(peerId: p1, namespace: 0, space: .everywhere),
                    MessageHistoryHoleOperationKey(peerId: p1, namespace: 0, space: .tag(MessageTags(rawValue: 2))),
                    MessageHistoryHoleOperationKey(peerId: p1, namespace: 1, space: .everywhere),
                    MessageHistoryHoleOperationKey(peerId: peer(2), namespace: 0, space: .everywhere)]
        var model = [MessageHistoryHoleOperationKey: MessageHistoryHoleRanges]()
        func randomRange() -> ClosedRange<Int32> {
            // Near the lower edge, near the upper edge, or anywhere.
            switch rng.below(4) {
            case 0:
                let a = rng.int32(in: -3...60), b = rng.int32(in: -3...60)
                return min(a, b)...max(a, b)
            case 1:
                let a = rng.int32(in: (Int32.max - 60)...Int32.max), b = rng.int32(in: (Int32.max - 60)...Int32.max)
                return min(a, b)...max(a, b)
            case 2:
                let a = rng.int32(in: 0...200)
                return a...(a + rng.int32(in: 0...3))
            default:
                let a = rng.int32(in: Int32.min...Int32.max), b = rng.int32(in: Int32.min...Int32.max)
                return min(a, b)...max(a, b)
            }
        }
        func check(_ t: MessageHistoryTables, _ model: [MessageHistoryHoleOperationKey: MessageHistoryHoleRanges]) throws {
            for key in keys {
                let expected = model[key]?.ranges ?? []
                #expect(try t.holes.holes(peerId: key.peerId, namespace: key.namespace, space: key.space) == expected, "seed \(seed) \(key)")
                for _ in 0..<4 {
                    let id = rng.below(2) == 0 ? rng.int32(in: -2...210) : rng.int32(in: (Int32.max - 62)...Int32.max)
                    let found = try t.holes.containing(peerId: key.peerId, namespace: key.namespace, space: key.space, id: id)
                    #expect(found == model[key]?.rangeContaining(id), "seed \(seed) \(key) id \(id)")
                }
            }
        }
        for round in 0..<300 {
            let abort = rng.below(6) == 0
            var working = model
            let body: (MessageHistoryTables) throws -> Void = { t in
                for _ in 0..<(1 + rng.below(8)) {
                    let key = keys[rng.below(keys.count)]
                    let range = randomRange()
                    if rng.below(2) == 0 {
                        try t.holes.addHole(peerId: key.peerId, namespace: key.namespace, space: key.space, range: range)
                        working[key, default: MessageHistoryHoleRanges()].insert(range)
                    } else {
                        try t.holes.removeHole(peerId: key.peerId, namespace: key.namespace, space: key.space, range: range)
                        working[key, default: MessageHistoryHoleRanges()].remove(range)
                    }
                }
                try check(t, working)
            }
            if abort {
                try f.abortedTransaction(body)
            } else {
                try f.transaction(body)
                model = working
            }
            if round % 50 == 49 { try f.reopen() }
            try f.read { t in try check(t, model) }
        }
    }
}
