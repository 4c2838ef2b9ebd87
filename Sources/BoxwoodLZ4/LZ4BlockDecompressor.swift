/// The decompressor. Every length is checked against the bytes left in the source and the destination before it is
/// used, and every offset against the bytes produced so far. Copies go 8 or 16 bytes at a time, past their end only
/// where both buffers have room for the overshoot (later bytes overwrite it); near the ends they copy exactly.
extension LZ4Block {
    /// Decodes the block of `sourceCount` (1 or more) bytes at `src` into `capacity` bytes at `dst`.
    @inline(__always)
    static func decompressBlock(_ src: UnsafeRawPointer, _ sourceCount: Int,
                                _ dst: UnsafeMutableRawPointer, _ capacity: Int) throws(LZ4BlockError) -> Int {
        var input = src
        let inputEnd = src + sourceCount
        var output = dst
        let outputEnd = dst + capacity

        while true {
            guard input < inputEnd else { throw .truncatedInput }
            let token = Int(input.load(as: UInt8.self))
            input += 1

            // Literals, then the offset.
            let offset: Int
            let literalNibble = token &>> 4
            if literalNibble != 15 && inputEnd - input >= 18 && outputEnd - output >= 16 {
                // The common short run: one 16-byte copy, the surplus overwritten later or left in the room; the
                // offset's 2 bytes are there.
                copy16(output, input)
                input += literalNibble
                output += literalNibble
                offset = Int(UInt16(littleEndian: input.loadUnaligned(as: UInt16.self)))
                input += 2
            } else {
                var literalCount = literalNibble
                if literalCount == 15 { literalCount += try readExtraLength(&input, inputEnd, limit: inputEnd - input, .truncatedInput) }
                if inputEnd - input >= literalCount + 18 && outputEnd - output >= literalCount + 16 {
                    // A long run far from both ends: 16-byte copies, up to 15 bytes past it.
                    var target = output
                    var source = input
                    let end = output + literalCount
                    repeat {
                        copy16(target, source)
                        target += 16
                        source += 16
                    } while target < end
                } else {
                    guard literalCount <= inputEnd - input else { throw .truncatedInput }
                    guard literalCount <= outputEnd - output else { throw .outputTooSmall }
                    output.copyMemory(from: input, byteCount: literalCount)
                    // The block ends with a literal run that ends the source.
                    if literalCount == inputEnd - input { return output - dst + literalCount }
                    guard inputEnd - input - literalCount >= 2 else { throw .truncatedInput }
                }
                input += literalCount
                output += literalCount
                offset = Int(UInt16(littleEndian: input.loadUnaligned(as: UInt16.self)))
                input += 2
            }

            // The match: 1 ≤ offset ≤ produced, in one unsigned comparison.
            let produced = output - dst
            guard UInt(bitPattern: offset &- 1) < UInt(bitPattern: produced) else {
                throw .offsetOutOfRange(offset: offset, position: produced)
            }
            var length = token & 15
            if length != 15 && offset >= 8 && outputEnd - output >= 24 {
                // The common short match (at most 18 bytes) far enough back: three words, in order.
                let source = UnsafeRawPointer(output - offset)
                if offset >= 16 {
                    copy16(output, source)
                } else {
                    copy8(output, source)
                    copy8(output + 8, source + 8)
                }
                copy8(output + 16, source + 16)
                output += length + minimumMatch
                continue
            }
            if length == 15 { length += try readExtraLength(&input, inputEnd, limit: outputEnd - output, .outputTooSmall) }
            length += minimumMatch
            guard length <= outputEnd - output else { throw .outputTooSmall }
            copyMatch(output, offset: offset, length: length, room: outputEnd - output)
            output += length
        }
    }

    /// Reads the bytes after a nibble of 15 (runs of 255 ended by a smaller byte) and returns their sum. Throws
    /// `.truncatedInput` when the source ends first, and `tooLong` as soon as the sum passes `limit` (so no sum
    /// overflows).
    @inline(__always)
    static func readExtraLength(_ input: inout UnsafeRawPointer, _ inputEnd: UnsafeRawPointer, limit: Int,
                                _ tooLong: LZ4BlockError) throws(LZ4BlockError) -> Int {
        var sum = 0
        var p = input
        while true {
            guard p < inputEnd else { throw .truncatedInput }
            let byte = Int(p.load(as: UInt8.self))
            p += 1
            sum += byte
            if byte != 255 { break }
            if sum > limit { throw tooLong }
        }
        input = p
        return sum
    }

    /// Copies `length` bytes from `offset` (1 or more) bytes before `output` to `output`, where `room` (at least
    /// `length`) bytes are writable. When the ranges overlap, the copy repeats the last `offset` bytes, as the format
    /// defines.
    @inline(__always)
    static func copyMatch(_ output: UnsafeMutableRawPointer, offset: Int, length: Int, room: Int) {
        let end = output + length
        if room - length >= 8 {
            var target = output
            var source = UnsafeRawPointer(output - offset)
            if offset < 8 {
                // Lay down the first 8 bytes one at a time, then copy words from a multiple of the offset that is
                // 8 or more bytes back: the same pattern, and each word read is already written.
                for i in 0..<8 {
                    target.storeBytes(of: source.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self)
                }
                target += 8
                // 1, 2, 4 → 8; 3 → 9; 5, 6, 7 → twice the offset.
                source = UnsafeRawPointer(target - (offset >= 5 ? offset &* 2 : offset == 3 ? 9 : 8))
            }
            while target < end {
                copy8(target, source)
                target += 8
                source += 8
            }
        } else {
            // Near the end of the destination: exactly `length` bytes, in order (correct for any overlap).
            let source = UnsafeRawPointer(output - offset)
            for i in 0..<length {
                output.storeBytes(of: source.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self)
            }
        }
    }
}
