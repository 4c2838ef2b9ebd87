import Foundation
import Testing
import Boxwood

/// Prints encode+decode throughput of a message-sized object; measures, never asserts on time.
/// Run in release for meaningful numbers: `swift test -c release --filter CoderThroughputTests`.
@Suite struct CoderThroughputTests {
    private struct CodableMessage: Codable {
        var id: Int32
        var peerId: Int64
        var timestamp: Int32
        var text: String
        var replyTo: Int32?
        var mediaSizes: [Int32]
        var entities: [String: Int]
    }

    private func measure(_ label: String, iterations: Int, bytes: Int, _ body: () throws -> Void) rethrows {
        let clock = ContinuousClock()
        let elapsed = try clock.measure { for _ in 0..<iterations { try body() } }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(iterations) / seconds
        print(String(format: "CoderThroughput %@: %.0f ops/s (%.2f µs each, %d bytes, %.1f MB/s)",
                     label, rate, 1e6 / rate, bytes, rate * Double(bytes) / 1e6))
    }

    @Test func storeMessageRoundTrips() throws {
        try registerTestTypes()
        let message = sampleStoreMessage()
        let encoder = PostboxEncoder()
        encoder.encodeRootObject(message)
        let size = encoder.length
        let iterations = ProcessInfo.processInfo.environment["BOXWOOD_THROUGHPUT_ITERATIONS"].flatMap(Int.init) ?? 20_000
        var check = 0
        measure("StoreMessage encode only", iterations: iterations, bytes: size) {
            encoder.reset()
            encoder.encodeRootObject(message)
            check &+= encoder.length
        }
        let stored = try encoder.makeReadBuffer()
        try measure("StoreMessage decode only", iterations: iterations, bytes: size) {
            let decoded = try PostboxDecoder.withDecoder(over: stored.bytes) { decoder throws(PostboxDecodingError) in
                try decoder.decodeRootObject(as: StoreMessage.self)
            }
            check &+= decoded.text.utf8.count
        }
        try measure("StoreMessage encode+decode", iterations: iterations, bytes: size) {
            encoder.reset()
            encoder.encodeRootObject(message)
            let decoded = try encoder.withBytes { bytes throws(PostboxDecodingError) in
                try PostboxDecoder.withDecoder(over: bytes) { decoder throws(PostboxDecodingError) in try decoder.decodeRootObject(as: StoreMessage.self) }
            }
            check &+= decoded.text.utf8.count + decoded.attributes.count
        }
        #expect(check > 0)
        let decoded = try PostboxDecoder.decodeRoot(from: encoder.makeReadBuffer(), as: StoreMessage.self)
        #expect(storeMessagesEqual(decoded, message))

        let codable = CodableMessage(id: 4242, peerId: 1 << 33, timestamp: 1_709_251_200, text: message.text, replyTo: 4239,
                                     mediaSizes: [90, 320, 800, 1280], entities: ["bold": 3, "url": 1])
        let codableEncoder = PostboxEncoder()
        try codableEncoder.encodeCodable(codable, forKey: "_")
        try measure("same message as a Codable struct", iterations: iterations / 4, bytes: codableEncoder.length) {
            codableEncoder.reset()
            try codableEncoder.encodeCodable(codable, forKey: "_")
            let decoded = try PostboxDecoder(bytes: codableEncoder.makeArray()).decodeCodable(CodableMessage.self, forKey: "_")
            check &+= decoded?.text.utf8.count ?? 0
        }
    }
}
