import Testing
import Boxwood
import BoxwoodStore

/// The orderings Postbox sorts history and the chat list by, checked against hand-written tuple comparisons.
@Suite struct OrderingTests {
    private func randomPeerId(_ rng: inout SplitMix64) -> PeerId {
        PeerId(namespace: PeerId.Namespace(Int32(rng.below(3))), id: PeerId.Id(Int64(rng.int32(in: -2...2))))
    }

    private func randomIndex(_ rng: inout SplitMix64) -> MessageIndex {
        MessageIndex(id: MessageId(peerId: randomPeerId(&rng), namespace: MessageId.Namespace(rng.interestingInt32()), id: rng.interestingInt32()),
                     timestamp: rng.interestingInt32())
    }

    /// Reference: (timestamp, namespace, id, peer namespace, peer id), lexicographically.
    private func referenceLess(_ a: MessageIndex, _ b: MessageIndex) -> Bool {
        (a.timestamp, a.id.namespace, a.id.id, a.id.peerId.namespace.rawValue, a.id.peerId.id.rawValue)
            < (b.timestamp, b.id.namespace, b.id.id, b.id.peerId.namespace.rawValue, b.id.peerId.id.rawValue)
    }

    /// Reference: pinned above unpinned, smaller pinning index above larger, then the message index.
    private func referenceLess(_ a: ChatListIndex, _ b: ChatListIndex) -> Bool {
        func rank(_ index: ChatListIndex) -> Int { index.pinningIndex.map { 1 + Int(UInt16.max) - Int($0) } ?? 0 }
        if rank(a) != rank(b) { return rank(a) < rank(b) }
        return referenceLess(a.messageIndex, b.messageIndex)
    }

    @Test func messageIndexOrderMatchesTheReference() {
        var rng = SplitMix64(seed: testSeed("OrderingTests.messageIndexOrderMatchesTheReference"))
        for _ in 0..<20_000 {
            let a = randomIndex(&rng)
            let b = rng.chance(0.1) ? a : randomIndex(&rng)
            #expect((a < b) == referenceLess(a, b), "\(a) vs \(b)")
            #expect((a == b) == (!referenceLess(a, b) && !referenceLess(b, a)))
        }
    }

    @Test func messageIdOrderIsNamespaceIdPeer() {
        var rng = SplitMix64(seed: testSeed("OrderingTests.messageIdOrderIsNamespaceIdPeer"))
        for _ in 0..<10_000 {
            let a = MessageId(peerId: randomPeerId(&rng), namespace: MessageId.Namespace(rng.int32(in: 0...2)), id: rng.int32(in: -2...2))
            let b = MessageId(peerId: randomPeerId(&rng), namespace: MessageId.Namespace(rng.int32(in: 0...2)), id: rng.int32(in: -2...2))
            let reference = (a.namespace, a.id, a.peerId.namespace.rawValue, a.peerId.id.rawValue)
                < (b.namespace, b.id, b.peerId.namespace.rawValue, b.peerId.id.rawValue)
            #expect((a < b) == reference, "\(a) vs \(b)")
        }
    }

    @Test func chatListIndexOrderMatchesTheReference() {
        var rng = SplitMix64(seed: testSeed("OrderingTests.chatListIndexOrderMatchesTheReference"))
        func randomChatListIndex() -> ChatListIndex {
            let pinning: UInt16? = rng.chance(0.4) ? [0, 1, 2, UInt16.max - 1, UInt16.max][rng.below(5)] : nil
            return ChatListIndex(pinningIndex: pinning, messageIndex: randomIndex(&rng))
        }
        var sample: [ChatListIndex] = []
        for _ in 0..<20_000 {
            let a = randomChatListIndex()
            let b = rng.chance(0.1) ? a : randomChatListIndex()
            #expect((a < b) == referenceLess(a, b), "\(a) vs \(b)")
            if sample.count < 500 { sample.append(a) }
        }
        #expect(sample.sorted() == sample.sorted(by: referenceLess))
        for index in sample {
            #expect(index <= ChatListIndex.absoluteUpperBound)
            #expect(index >= ChatListIndex.absoluteLowerBound)
        }
    }

    @Test func pinnedChatsSortAboveUnpinnedAndByPinningIndex() {
        let peer = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(1))
        let old = MessageIndex(id: MessageId(peerId: peer, namespace: 0, id: 1), timestamp: 10)
        let new = MessageIndex(id: MessageId(peerId: peer, namespace: 0, id: 2), timestamp: 20)
        let unpinnedNew = ChatListIndex(pinningIndex: nil, messageIndex: new)
        let pinnedFirst = ChatListIndex(pinningIndex: 0, messageIndex: old)
        let pinnedSecond = ChatListIndex(pinningIndex: 1, messageIndex: new)
        #expect(unpinnedNew < pinnedSecond)
        #expect(pinnedSecond < pinnedFirst)
        #expect(ChatListIndex(pinningIndex: nil, messageIndex: old) < unpinnedNew)
        #expect(ChatListHole(index: old) < ChatListHole(index: new))
    }

    @Test func predecessorAndSuccessorAreTheNeighboursWithinAPeer() {
        var rng = SplitMix64(seed: testSeed("OrderingTests.predecessorAndSuccessorAreTheNeighboursWithinAPeer"))
        for _ in 0..<10_000 {
            let index = randomIndex(&rng)
            let lower = MessageIndex.lowerBound(peerId: index.id.peerId)
            let upper = MessageIndex.upperBound(peerId: index.id.peerId)
            if index != lower {
                #expect(index.predecessor() < index)
                #expect(index.predecessor().successor() == index)
                #expect(index.predecessor().id.peerId == index.id.peerId)
            } else {
                #expect(index.predecessor() == index)
            }
            if index != upper {
                #expect(index.successor() > index)
                #expect(index.successor().predecessor() == index)
            } else {
                #expect(index.successor() == index)
            }
            #expect(lower <= index && index <= upper)
            #expect(MessageIndex.absoluteLowerBound() <= index && index <= MessageIndex.absoluteUpperBound())
        }
        let peer = PeerId(namespace: PeerId.Namespace(1), id: PeerId.Id(9))
        let start = MessageIndex(id: MessageId(peerId: peer, namespace: 3, id: .min), timestamp: 50)
        #expect(start.predecessor() == MessageIndex(id: MessageId(peerId: peer, namespace: 2, id: .max), timestamp: 50))
        let first = MessageIndex(id: MessageId(peerId: peer, namespace: .min, id: .min), timestamp: 50)
        #expect(first.predecessor() == MessageIndex(id: MessageId(peerId: peer, namespace: .max, id: .max), timestamp: 49))
    }
}
