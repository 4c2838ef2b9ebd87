import Testing
import Boxwood
import BoxwoodStore

@Suite struct HoleRangesTests {
    /// The set's invariants: ascending, disjoint, at least one id between neighbours, inside the valid ids.
    private func checkInvariants(_ set: MessageHistoryHoleRanges, sourceLocation: SourceLocation = #_sourceLocation) {
        for range in set.ranges {
            #expect(MessageHistoryHoleRanges.validIds.contains(range.lowerBound), sourceLocation: sourceLocation)
            #expect(MessageHistoryHoleRanges.validIds.contains(range.upperBound), sourceLocation: sourceLocation)
        }
        for (a, b) in zip(set.ranges, set.ranges.dropFirst()) {
            #expect(Int64(a.upperBound) + 1 < Int64(b.lowerBound), "\(set) has touching ranges", sourceLocation: sourceLocation)
        }
    }

    @Test func mergesAdjacentAndOverlappingRanges() {
        var set = MessageHistoryHoleRanges()
        set.insert(1...5)
        set.insert(6...9)
        #expect(set.ranges == [1...9])
        set.insert(20...30)
        set.insert(12...15)
        #expect(set.ranges == [1...9, 12...15, 20...30])
        set.insert(10...11)
        #expect(set.ranges == [1...15, 20...30])
        set.insert(14...25)
        #expect(set.ranges == [1...30])
        set.insert(3...4)
        #expect(set.ranges == [1...30])
        #expect(set.count == 30)
    }

    @Test func removeSplitsAndTrims() {
        var set = MessageHistoryHoleRanges([1...100])
        set.remove(40...60)
        #expect(set.ranges == [1...39, 61...100])
        set.remove(30...70)
        #expect(set.ranges == [1...29, 71...100])
        set.remove(1...1)
        #expect(set.ranges == [2...29, 71...100])
        set.remove(Int32.min...Int32.max)
        #expect(set.isEmpty)
    }

    @Test func rangesAreClippedToTheValidIds() {
        var set = MessageHistoryHoleRanges()
        set.insert(Int32.min...0)
        #expect(set.isEmpty)
        set.insert(Int32.max...Int32.max)
        #expect(set.isEmpty)
        set.insert(-10...10)
        #expect(set.ranges == [1...10])
        set.insert(Int32.min...Int32.max)
        #expect(set.ranges == [MessageHistoryHoleRanges.validIds])
        #expect(set.count == Int64(Int32.max) - 1)
        #expect(!set.contains(0) && !set.contains(Int32.max) && set.contains(Int32.max - 1) && set.contains(1))
        set.remove(Int32.max - 1...Int32.max)
        #expect(set.ranges == [1...(Int32.max - 2)])
        #expect(set.intersection(Int32.max - 5...Int32.max) == [(Int32.max - 5)...(Int32.max - 2)])
    }

    /// Random inserts and removes over a small id window, compared after every step with a `Set<Int32>`.
    private func compareWithModel(window: ClosedRange<Int32>, seed: UInt64, steps: Int) {
        var rng = SplitMix64(seed: seed)
        var set = MessageHistoryHoleRanges()
        var model = Set<Int32>()
        func randomRange() -> ClosedRange<Int32> {
            let a = rng.int32(in: window)
            let b = rng.chance(0.3) ? a : rng.int32(in: window)
            return min(a, b)...max(a, b)
        }
        for step in 0..<steps {
            let range = randomRange()
            if rng.chance(0.55) {
                set.insert(range)
                for id in range where MessageHistoryHoleRanges.validIds.contains(id) { model.insert(id) }
            } else {
                set.remove(range)
                for id in range { model.remove(id) }
            }
            checkInvariants(set)
            for id in window {
                if set.contains(id) != model.contains(id) {
                    Issue.record("seed \(seed) step \(step): id \(id) set \(set.contains(id)) model \(model.contains(id)); \(set)")
                    return
                }
                if let containing = set.rangeContaining(id) {
                    #expect(containing.contains(id))
                }
            }
            #expect(set.count == Int64(model.count))
            let probe = randomRange()
            let expected = model.filter { probe.contains($0) }
            let found = set.intersection(probe)
            #expect(Set(found.flatMap { Array($0) }) == expected, "intersection \(probe) of \(set)")
            #expect(found.allSatisfy { probe.lowerBound <= $0.lowerBound && $0.upperBound <= probe.upperBound })
            #expect(MessageHistoryHoleRanges(set.ranges) == set)
        }
    }

    @Test func matchesABruteForceModelNearTheLowerEdge() {
        let seed = testSeed("HoleRangesTests.matchesABruteForceModelNearTheLowerEdge")
        for round in 0..<40 { compareWithModel(window: -4...40, seed: seed &+ UInt64(round), steps: 60) }
    }

    @Test func matchesABruteForceModelNearTheUpperEdge() {
        let seed = testSeed("HoleRangesTests.matchesABruteForceModelNearTheUpperEdge")
        for round in 0..<40 { compareWithModel(window: (Int32.max - 40)...Int32.max, seed: seed &+ UInt64(round), steps: 60) }
    }

    @Test func spaceRawValues() {
        #expect(MessageHistoryHoleSpace(rawValue: 0) == .everywhere)
        #expect(MessageHistoryHoleSpace.everywhere.rawValue == 0)
        let tagged = MessageHistoryHoleSpace.tag(MessageTags(rawValue: 1 << 4))
        #expect(MessageHistoryHoleSpace(rawValue: tagged.rawValue) == tagged)
    }
}
