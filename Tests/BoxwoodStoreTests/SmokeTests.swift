import Testing
import Foundation
@testable import BoxwoodStore

@Suite struct SmokeTests {
    @Test func setGetReopen() throws {
        let dir = NSTemporaryDirectory() + "bw-smoke-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let t = ValueBoxTable(id: 1, keyType: .binary)
        do {
            let box = try ValueBox(path: dir)
            try box.begin()
            for i in 0..<20000 {
                var k = ValueBoxKey(length: 4); k.setInt32(0, value: Int32(i))
                try box.set(t, key: k, value: MemoryBuffer(Array("value-\(i)".utf8)))
            }
            try box.commit()
            #expect(try box.count(t) == 20000)
            try box.close()
        }
        let box = try ValueBox(path: dir)
        for i in stride(from: 0, to: 20000, by: 7) {
            var k = ValueBoxKey(length: 4); k.setInt32(0, value: Int32(i))
            let v = try box.get(t, key: k)
            #expect(v.map { String(decoding: $0.makeArray(), as: UTF8.self) } == "value-\(i)")
        }
        var n = 0
        try box.range(t, start: ValueBoxKey(length: 0), end: ValueBoxKey([0xff]), keys: { _ in n += 1; return true }, limit: 0)
        #expect(n == 20000)
        try box.begin()
        for i in 0..<19990 { var k = ValueBoxKey(length: 4); k.setInt32(0, value: Int32(i)); try box.remove(t, key: k) }
        try box.commit()
        #expect(try box.count(t) == 10)
        let report = try box.check()
        #expect(report.problems == [])
        try box.checkpoint()
        let report2 = try box.check()
        #expect(report2.problems == [])
    }
}
