import Foundation
import Testing
@testable import Boxwood

/// Message ids, read marks and hole ranges at the ends of Int32, as a hostile or broken server sends them
/// (issue 22: hostile input never crashes). Every case used to trap or must keep working: an id of Int32.max
/// added as the newest message computed the hole range `Int32.max...(Int32.max − 1)`.
@Suite struct ExtremeIdTableTests {
    let p1 = peer(1)
    let top = Int32.max - 1

    private func seeded(_ name: String) throws -> HistoryFixture {
        var configuration = MessageHistoryConfiguration()
        configuration.messageHoles = [PeerId.Namespace(0): [0: [MessageTags(rawValue: 1)]]]
        configuration.defaultMessageNamespaceReadStates = [0: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)]
        return try HistoryFixture(name, configuration: configuration)
    }

    private func holes(_ t: MessageHistoryTables, _ space: MessageHistoryHoleSpace = .everywhere) throws -> [ClosedRange<Int32>] {
        try t.holes.holes(peerId: p1, namespace: 0, space: space)
    }

    /// An upper history block whose lowest id is Int32.max is stored, found, and removes no hole (holes cover
    /// 1…Int32.max−1); stored again after a reopen it is skipped as present. Before the fix: a trap.
    @Test func anUpperBlockAtInt32MaxIsStored() throws {
        let f = try seeded("max-id")
        let id = MessageId(peerId: p1, namespace: 0, id: .max)
        try f.transaction { t in
            try t.history.addMessages([storeMessage(id, timestamp: 100, flags: [.incoming])], location: .upperHistoryBlock)
            #expect(try t.history.getMessage(id)?.id == id)
            #expect(try holes(t) == [1...top])
            #expect(try holes(t, .tag(MessageTags(rawValue: 1))) == [1...top])
            #expect(try t.readStates.get(p1)?.states[0]?.count == 1)
        }
        try f.reopen()
        try f.transaction { t in
            try t.history.addMessages([storeMessage(id, timestamp: 100, flags: [.incoming])], location: .upperHistoryBlock)
            #expect(try t.history.topIndex(peerId: p1, namespace: 0)?.id == id)
            // Read up to it: every id below is covered by holes, so the count is recounted above the mark.
            try t.history.applyIncomingMaxReadId(id)
            #expect(try t.readStates.get(p1)?.states[0] == .idBased(maxIncomingReadId: .max, maxOutgoingReadId: 0, maxKnownId: .max,
                                                                   count: 0, markedUnread: false))
            try t.history.deleteMessages([id])
            #expect(try t.history.getMessage(id) == nil)
        }
    }

    /// Int32.max next to an ordinary id in one upper block: the holes from the lower id up are removed.
    @Test func anUpperBlockReachingInt32MaxRemovesTheHolesAboveItsLowestId() throws {
        let f = try seeded("max-id-block")
        try f.transaction { t in
            try t.history.addMessages([storeMessage(MessageId(peerId: p1, namespace: 0, id: .max), timestamp: 2),
                                       storeMessage(MessageId(peerId: p1, namespace: 0, id: 10), timestamp: 1)], location: .upperHistoryBlock)
            #expect(try holes(t) == [1...9])
            // The smallest ids: the range from them up covers every hole.
            try t.history.addMessages([storeMessage(MessageId(peerId: p1, namespace: 0, id: .min), timestamp: 0)], location: .upperHistoryBlock)
            #expect(try holes(t) == [])
        }
    }

    /// Hole ranges and read marks at the ends of Int32 are clipped or compared, never computed past the end.
    @Test func holeRangesAndReadMarksAtTheEnds() throws {
        let f = try seeded("ends")
        try f.transaction { t in
            try t.holes.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.min...Int32.max)
            #expect(try holes(t) == [])
            try t.holes.addHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.max...Int32.max)
            try t.holes.addHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.min...0)
            #expect(try holes(t) == [])
            try t.holes.addHole(peerId: p1, namespace: 0, space: .everywhere, range: Int32.min...Int32.max)
            #expect(try holes(t) == [1...top])
            #expect(try t.holes.containing(peerId: p1, namespace: 0, space: .everywhere, id: .max) == nil)
            #expect(try t.holes.holes(peerId: p1, namespace: 0, space: .everywhere, overlapping: Int32.max...Int32.max) == [])
            try t.holes.removeHole(peerId: p1, namespace: 0, space: .everywhere, range: top...Int32.max)
            #expect(try holes(t) == [1...(top - 1)])

            try t.history.resetReadStates(peerId: p1, states: [0: .idBased(maxIncomingReadId: .min, maxOutgoingReadId: .min,
                                                                             maxKnownId: .min, count: .min, markedUnread: false)])
            try t.history.addMessages([storeMessage(MessageId(peerId: p1, namespace: 0, id: 5), timestamp: 5, flags: [.incoming])], location: .random)
            try t.history.applyIncomingMaxReadId(MessageId(peerId: p1, namespace: 0, id: .max))
            try t.history.applyOutgoingMaxReadId(MessageId(peerId: p1, namespace: 0, id: .max))
            let state = try #require(try t.readStates.get(p1)?.states[0])
            #expect(state == .idBased(maxIncomingReadId: .max, maxOutgoingReadId: .max, maxKnownId: .max, count: 0, markedUnread: false))
        }
    }
}
