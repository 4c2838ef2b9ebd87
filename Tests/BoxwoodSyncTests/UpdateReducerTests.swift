import Boxwood
@testable import BoxwoodSync
import Testing

/// The gap rules on their own: held-back updates stay held (and stay the same size) until the gap fills.
@Suite("Update reducer")
struct UpdateReducerTests {
    let account = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1))
    let alice = ApiUser(id: PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(2)), firstName: "Alice", lastName: "", username: nil)
    let bob = ApiUser(id: PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(3)), firstName: "Bob", lastName: "", username: nil)

    func message(_ id: Int32) -> ApiMessage {
        ApiMessage(id: id, peerId: alice.id, fromId: alice.id, date: 100 + id, text: "m\(id)", outgoing: false)
    }

    @Test func heldUpdatesDoNotGrowWhenExaminedAgain() {
        let cursor = SyncAccountState(pts: 10, qts: 0, date: 0, seq: 0)
        // pts 12 and 13 arrive; 11 is missing.
        var held: [UpdateGroup] = [
            .withPts(updates: [.newMessage(message(2), pts: 12, ptsCount: 1)], users: [alice, bob], chats: []),
            .withPts(updates: [.newMessage(message(3), pts: 13, ptsCount: 1)], users: [alice, bob], chats: []),
        ]
        for _ in 0..<30 {
            var state = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: 0)
            let outcome = UpdateReducer.reduce(held, into: &state, source: .realtime)
            #expect(outcome.commonGap)
            #expect(state.state.pts == 10)
            held = outcome.heldBack
        }
        #expect(held.count == 1)
        if case let .withPts(updates, users, _) = held.first {
            #expect(updates.count == 2)
            #expect(users.count == 2)
        } else {
            Issue.record("expected one held pts group, got \(held)")
        }
        // The missing update arrives: everything applies in order.
        var state = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: 0)
        let outcome = UpdateReducer.reduce(held + [.withPts(updates: [.newMessage(message(1), pts: 11, ptsCount: 1)], users: [], chats: [])],
                                           into: &state, source: .realtime)
        #expect(!outcome.commonGap)
        #expect(outcome.heldBack.isEmpty)
        #expect(state.state.pts == 13)
        #expect(outcome.applied == 3)
    }

    @Test func sequenceCheckerRules() {
        #expect(SequenceChecker.check(local: 10, value: 11, count: 1) == .apply)
        #expect(SequenceChecker.check(local: 10, value: 10, count: 1) == .alreadyApplied)
        #expect(SequenceChecker.check(local: 10, value: 12, count: 1) == .gap)
        #expect(SequenceChecker.check(local: 10, value: 13, count: 3) == .apply)
        #expect(SequenceChecker.check(local: 10, value: 11, count: 2) == .alreadyApplied)
    }
}
