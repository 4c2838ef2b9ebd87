import Testing
import Boxwood
import BoxwoodStore

@Suite struct PeerIdTests {
    static let edgeIds: [Int64] = [
        0, 1, -1, 2, -2, Int64(Int32.max), Int64(Int32.min), Int64(UInt32.max), Int64(UInt32.max) + 1,
        -Int64(UInt32.max), 1 << 32, -(1 << 32), (1 << 59), -(1 << 59), (1 << 60) - 1, -(1 << 60),
        1_234_567_890_123, -987_654_321_012,
    ]

    @Test func everyNamespaceAndEdgeIdRoundTrips() {
        for namespace in Int32(0)...7 {
            for raw in Self.edgeIds {
                let peerId = PeerId(namespace: PeerId.Namespace(namespace), id: PeerId.Id(raw))
                let packed = peerId.toInt64()
                #expect(PeerId(packed) == peerId, "ns \(namespace) id \(raw) packed \(packed)")
                #expect(PeerId(packed).namespace.rawValue == namespace)
                #expect(PeerId(packed).id.rawValue == raw)
            }
        }
    }

    @Test func smallNonNegativeIdsUseTheLegacyLayout() {
        for namespace in Int32(0)...7 {
            for raw: Int64 in [0, 1, 1000, Int64(Int32.max), Int64(UInt32.max)] {
                let peerId = PeerId(namespace: PeerId.Namespace(namespace), id: PeerId.Id(raw))
                #expect(peerId.toInt64() == (Int64(namespace) << 32) | raw)
            }
        }
    }

    @Test func packingIsABijectionOfInt64() {
        var rng = SplitMix64(seed: testSeed("PeerIdTests.packingIsABijectionOfInt64"))
        var samples: [Int64] = [0, -1, .min, .max, 1 << 35, (1 << 35) - 1, -(1 << 35)]
        for _ in 0..<10_000 { samples.append(rng.int64()) }
        for packed in samples {
            let peerId = PeerId(packed)
            #expect(peerId.toInt64() == packed, "\(packed) unpacked to \(peerId)")
            #expect(PeerId(namespace: peerId.namespace, id: peerId.id) == peerId)
        }
    }

    @Test func maximumNamespaceAndIdLimits() {
        #expect(PeerId.Namespace.max.rawValue == 7)
        #expect(PeerId.Namespace(exactly: 8) == nil)
        #expect(PeerId.Namespace(exactly: -1) == nil)
        #expect(PeerId.Namespace(exactly: 7) == .max)
        #expect(PeerId.Id(exactly: 1 << 60) == nil)
        #expect(PeerId.Id(exactly: -(1 << 60) - 1) == nil)
        #expect(PeerId.Id(exactly: (1 << 60) - 1) == .max)
        #expect(PeerId.Id(exactly: -(1 << 60)) == .min)
        let extreme = PeerId(namespace: .max, id: .max)
        #expect(PeerId(extreme.toInt64()) == extreme)
        #expect(extreme.toInt64() == Int64.max)
        let lowest = PeerId(namespace: .max, id: .min)
        #expect(PeerId(lowest.toInt64()) == lowest)
        #expect(lowest.toInt64() < 0)
    }

    @Test func ordersByNamespaceThenId() {
        let a = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(500))
        let b = PeerId(namespace: PeerId.Namespace(1), id: PeerId.Id(-5))
        let c = PeerId(namespace: PeerId.Namespace(1), id: PeerId.Id(3))
        #expect(a < b && b < c && a < c)
        #expect(!(c < c))
        #expect([c, a, b].sorted() == [a, b, c])
        #expect(b.description == "1:-5")
    }
}
