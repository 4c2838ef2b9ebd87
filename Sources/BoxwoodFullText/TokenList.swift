import BoxwoodStore
import BoxwoodPlatform

/// The tokens of one text, in order: their UTF-8 bytes concatenated in one array, plus where each one ends.
/// Building one costs two arrays, not one allocation per token. Token `i` is at position `i` of the text.
struct TokenList {
    /// Every token's bytes, back to back.
    private(set) var bytes: [UInt8] = []
    /// The end offset in `bytes` of each finished token.
    private(set) var ends: [Int] = []
    /// Set once a scalar of the current token was dropped for length: the rest of the token is dropped too,
    /// so a cut token is always a prefix of the full one.
    private var truncated = false

    init() {
        bytes.reserveCapacity(256)
        ends.reserveCapacity(64)
    }

    /// The number of finished tokens.
    var count: Int { ends.count }

    /// Where token `i` lies in `bytes`.
    @inline(__always)
    func range(_ i: Int) -> Range<Int> { (i == 0 ? 0 : ends[i - 1])..<ends[i] }

    /// Token `i` as an array.
    func token(_ i: Int) -> [UInt8] { Array(bytes[range(i)]) }

    /// Token `i` as a string.
    func string(_ i: Int) -> String { String(decoding: bytes[range(i)], as: UTF8.self) }

    /// The start of the token being built.
    @inline(__always)
    private var currentStart: Int { ends.last ?? 0 }

    /// Appends an ASCII byte to the current token.
    @inline(__always)
    mutating func append(ascii byte: UInt8) {
        if truncated { return }
        if bytes.count - currentStart >= FullTextTokenizer.maxTokenBytes { truncated = true; return }
        bytes.append(byte)
    }

    /// Appends a scalar (UTF-8 encoded) to the current token, unless the token would exceed
    /// `FullTextTokenizer.maxTokenBytes`.
    @inline(__always)
    mutating func append(_ scalar: Unicode.Scalar) {
        let v = scalar.value
        if v < 0x80 { append(ascii: UInt8(v)); return }
        if truncated { return }
        let length = v < 0x800 ? 2 : v < 0x1_0000 ? 3 : 4
        if bytes.count - currentStart + length > FullTextTokenizer.maxTokenBytes { truncated = true; return }
        switch length {
        case 2:
            bytes.append(UInt8(0xC0 | (v >> 6)))
            bytes.append(UInt8(0x80 | (v & 0x3F)))
        case 3:
            bytes.append(UInt8(0xE0 | (v >> 12)))
            bytes.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (v & 0x3F)))
        default:
            bytes.append(UInt8(0xF0 | (v >> 18)))
            bytes.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            bytes.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    /// Appends a whole token (not empty; at most `FullTextTokenizer.maxTokenBytes` long when it comes from the
    /// tokenizer) and finishes it.
    mutating func append(token: UnsafeRawBufferPointer) {
        finishToken()
        bytes.append(contentsOf: token)
        if !token.isEmpty { ends.append(bytes.count) }
    }

    /// Empties the list, keeping its capacity.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        truncated = false
    }

    /// Ends the current token; nothing happens when it is empty.
    @inline(__always)
    mutating func finishToken() {
        truncated = false
        if bytes.count > currentStart { ends.append(bytes.count) }
    }

    /// The distinct tokens in the order of their first occurrence, each with its ascending positions: no
    /// sorting, one hash probe per token (for the lists a document goes into, which need no order).
    func distinctTokensUnordered() -> [(token: Range<Int>, positions: [Int32])] {
        let count = ends.count
        if count == 0 { return [] }
        var size = 16
        while size < count * 2 { size <<= 1 }
        let mask = size - 1
        var slots = [Int32](repeating: -1, count: size)  // index into `result`
        var result: [(token: Range<Int>, positions: [Int32])] = []
        result.reserveCapacity(count)
        bytes.withUnsafeBytes { all in
            var start = 0
            for i in 0..<count {
                let end = ends[i]
                let token = UnsafeRawBufferPointer(rebasing: all[start..<end])
                var hash: UInt64 = 0xCBF2_9CE4_8422_2325
                for byte in token { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
                var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
                while true {
                    let index = Int(slots[slot])
                    if index < 0 {
                        slots[slot] = Int32(result.count)
                        result.append((start..<end, [Int32(i)]))
                        break
                    }
                    if compareBytes(UnsafeRawBufferPointer(rebasing: all[result[index].token]), token) == 0 {
                        result[index].positions.append(Int32(i))
                        break
                    }
                    slot = (slot + 1) & mask
                }
                start = end
            }
        }
        return result
    }

    /// The distinct tokens, sorted by their bytes, each with its ascending positions.
    func distinctTokens() -> [(token: Range<Int>, positions: [Int32])] {
        if ends.isEmpty { return [] }
        var order = [Int32](0..<Int32(ends.count))
        bytes.withUnsafeBufferPointer { base in
            let ends = self.ends
            order.sort { a, b in
                let ra = (a == 0 ? 0 : ends[Int(a) - 1])..<ends[Int(a)]
                let rb = (b == 0 ? 0 : ends[Int(b) - 1])..<ends[Int(b)]
                let c = compareBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: base[ra])),
                                     UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: base[rb])))
                return c != 0 ? c < 0 : a < b
            }
        }
        var result: [(token: Range<Int>, positions: [Int32])] = []
        for index in order {
            let r = range(Int(index))
            if let last = result.last, bytes[last.token].elementsEqual(bytes[r]) {
                result[result.count - 1].positions.append(index)
            } else {
                result.append((r, [index]))
            }
        }
        return result
    }
}

/// memcmp order, shorter first on a common prefix (the engine's key order).
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {  // then neither buffer is empty, and both have an address
        let c = compareBytes(a.baseAddress!, b.baseAddress!, count: n)
        if c != 0 { return Int(c) }
    }
    return a.count - b.count
}

/// True when `bytes` starts with `prefix`.
@inline(__always)
func hasBytePrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: UnsafeRawBufferPointer) -> Bool {
    prefix.count <= bytes.count && compareBytes(UnsafeRawBufferPointer(rebasing: bytes[..<prefix.count]), prefix) == 0
}

/// `array.withUnsafeBytes` for a body with typed throws (`withUnsafeBytes` only rethrows untyped errors).
@inline(__always)
func withBytes<R>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(BoxwoodError) -> R) throws(BoxwoodError) -> R {
    try array.withUnsafeBytes { bytes in Result { () throws(BoxwoodError) -> R in try body(bytes) } }.get()
}
