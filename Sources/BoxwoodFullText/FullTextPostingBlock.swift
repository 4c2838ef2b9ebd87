import BoxwoodStore
/// The value of one block of a posting list (a token's postings, a tag's or a collection's documents). The key is
/// `list prefix ‖ first docId (8 bytes BE)`; the value holds the block's entries in ascending docId order:
///
///     content postings (`hasPositions`; layout 3):
///     entry 0:        varint n, then n bytes of positions, or n = 0 and one varint position
///     entry i > 0:    varint (docId − previous docId) × 2 + m (difference ≥ 1), then
///                     m = 1: varint n, n bytes of positions;   m = 0: one varint position
///     tags and collections:
///     entry 0:        nothing                                          its docId is the key's
///     entry i > 0:    varint docId − previous docId (≥ 1)
///
/// Positions are a token's positions in the document, encoded by `FullTextPositions` (the first, then deltas).
/// Most tokens occur once in a message: their single position goes without a length (one byte less per
/// posting). Tags and collections have no positions, so a one-entry block of theirs is an empty value.
///
/// Invariant (kept by `FullTextPostingBlock.Builder` and by the list updates in
/// `ValueBox+FullTextPostingLists.swift`): every docId of a list appears in exactly one block; blocks of a list
/// do not overlap (each block's docIds lie between its key's docId and the next block's key's docId); a block's value
/// stays within `maxBytes` unless its single entry alone is longer.
enum FullTextPostingBlock {
    /// Appending entries starts a new block once the value would exceed this many bytes. Small enough that
    /// rewriting a list's last block on every commit that appends to it stays cheap; large enough that the key
    /// (token, separator, docId) and the B+tree cell cost little per posting.
    /// (A task-local value so that tests can make blocks tiny and exercise splits with few documents.)
    @TaskLocal static var maxBytes = 240

    /// The docId of a block key (its last 8 bytes).
    static func firstDocId(ofKey key: UnsafeRawBufferPointer) -> UInt64 {
        FullTextKeys.docId(atEndOf: key)
    }

    /// Reads a block's entries in order. `next()` returns false at the end; a malformed value throws.
    struct Reader {
        private var reader: ByteReader
        private let hasPositions: Bool
        private var started = false
        /// The current entry's document id (valid after `next()` returned true).
        private(set) var docId: UInt64
        /// The current entry's encoded positions (empty without positions).
        private(set) var positions = UnsafeRawBufferPointer(start: nil, count: 0)
        /// The current entry's bytes in the value (for an entry after the first: its docId delta from the previous
        /// entry, then its positions; see `Builder.appendEncoded`).
        private(set) var entryBytes = UnsafeRawBufferPointer(start: nil, count: 0)

        init(firstDocId: UInt64, value: UnsafeRawBufferPointer, hasPositions: Bool) {
            reader = ByteReader(value)
            self.hasPositions = hasPositions
            docId = firstDocId
        }

        /// Moves to the next entry; false when there is none.
        mutating func next() throws(FullTextFormatError) -> Bool {
            let entryStart = reader.offset
            var hasLength = true
            if started {
                if reader.isAtEnd { return false }
                guard var delta = try? reader.varint() else { throw .malformedBlock }
                if hasPositions {
                    hasLength = delta & 1 == 1
                    delta >>= 1
                }
                guard delta > 0, delta <= UInt64.max - docId else { throw .malformedBlock }
                docId += delta
            }
            if hasPositions {
                var length: UInt64 = 0
                if hasLength {
                    guard let n = try? reader.varint(), n <= UInt64(reader.remaining), n > 0 || !started else { throw .malformedBlock }
                    length = n
                }
                if length == 0 {
                    // One position: the varint itself.
                    let start = reader.offset
                    guard (try? reader.varint()) != nil else { throw .malformedBlock }
                    positions = UnsafeRawBufferPointer(rebasing: reader.buffer[start..<reader.offset])
                } else {
                    guard let bytes = try? reader.bytes(Int(length)) else { throw .malformedBlock }
                    positions = bytes
                }
            }
            started = true
            entryBytes = UnsafeRawBufferPointer(rebasing: reader.buffer[entryStart..<reader.offset])
            return true
        }
    }

    /// The docId of a block's last entry: what reading every entry with `Reader` ends at, with the same checks (a
    /// value `Reader` finds malformed throws here too), but without making each entry's positions and bytes. For
    /// the appends of a commit, which read a list's last block only to continue it.
    static func lastDocId(firstDocId: UInt64, value: UnsafeRawBufferPointer, hasPositions: Bool) throws(FullTextFormatError) -> UInt64 {
        let count = value.count
        guard let base = value.baseAddress else {
            // An empty value: a one-entry block without positions; a posting block needs its first entry's bytes.
            if hasPositions { throw .malformedBlock }
            return firstDocId
        }
        var offset = 0
        // `ByteReader.varint`: at most 10 bytes, the last one without the continuation bit.
        @inline(__always) func varint() throws(FullTextFormatError) -> UInt64 {
            let end = min(offset + 10, count)
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < end {
                let byte = base.load(fromByteOffset: offset, as: UInt8.self)
                offset += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw .malformedBlock
        }
        var docId = firstDocId
        var hasLength = true
        var started = false
        while true {
            if started {
                if offset == count { return docId }
                var delta = try varint()
                if hasPositions {
                    hasLength = delta & 1 == 1
                    delta >>= 1
                }
                guard delta > 0, delta <= UInt64.max - docId else { throw .malformedBlock }
                docId += delta
            }
            if hasPositions {
                var length: UInt64 = 0
                if hasLength {
                    let n = try varint()
                    guard n <= UInt64(count - offset), n > 0 || !started else { throw .malformedBlock }
                    length = n
                }
                if length == 0 { _ = try varint() } else { offset += Int(length) }
            }
            started = true
        }
    }

    /// Encodes entries (ascending docIds) into block values, starting a new block when one would exceed
    /// `maxBytes`. `finish()` returns the blocks made.
    struct Builder {
        private let hasPositions: Bool
        private let maxBytes: Int
        /// The finished blocks: (first docId, value).
        private(set) var blocks: [(firstDocId: UInt64, value: [UInt8])] = []
        private var current: [UInt8] = []
        private var currentFirst: UInt64 = 0
        private var last: UInt64 = 0
        private var isEmpty = true

        init(hasPositions: Bool, maxBytes: Int = FullTextPostingBlock.maxBytes) {
            self.hasPositions = hasPositions
            self.maxBytes = maxBytes
        }

        /// Continues an existing block (the list's last one) whose entries end at docId `last`.
        init(continuing value: UnsafeRawBufferPointer, firstDocId: UInt64, lastDocId: UInt64, hasPositions: Bool,
             maxBytes: Int = FullTextPostingBlock.maxBytes) {
            self.init(hasPositions: hasPositions, maxBytes: maxBytes)
            current = Array(value)
            currentFirst = firstDocId
            last = lastDocId
            isEmpty = false
        }

        /// Appends an entry; `docId` must be larger than the previous entry's.
        mutating func append(_ docId: UInt64, positions: UnsafeRawBufferPointer) {
            // A single position is one varint: only its last byte lacks the continuation bit.
            let single = hasPositions && positions.count > 0 && positions.dropLast().allSatisfy { $0 & 0x80 != 0 }
            let header = (hasPositions ? 2 : 1) * (docId &- last) + (hasPositions && !single ? 1 : 0)
            let length = !hasPositions ? 0 : single ? positions.count : varintSize(UInt64(positions.count)) + positions.count
            if !isEmpty && current.count + varintSize(header) + length > maxBytes {
                blocks.append((currentFirst, current))
                current = []
                isEmpty = true
            }
            if isEmpty {
                currentFirst = docId
                isEmpty = false
                if hasPositions { appendVarint(single ? 0 : UInt64(positions.count), to: &current) }
            } else {
                appendVarint(header, to: &current)
                if hasPositions && !single { appendVarint(UInt64(positions.count), to: &current) }
            }
            current.append(contentsOf: positions)
            last = docId
        }

        /// Appends the entry of `docId` from its bytes in another block (`Reader.entryBytes` of an entry after
        /// that block's first), which encode it relative to the previous docId there: that docId must be the last
        /// one appended here. Copied as they are unless the entry must start a block (then encoded again from
        /// `positions`).
        mutating func appendEncoded(_ entry: UnsafeRawBufferPointer, docId: UInt64, positions: UnsafeRawBufferPointer) {
            if isEmpty || current.count + entry.count > maxBytes {
                append(docId, positions: positions)
                return
            }
            current.append(contentsOf: entry)
            last = docId
        }

        /// The blocks, the last one included (none when nothing was appended).
        mutating func finish() -> [(firstDocId: UInt64, value: [UInt8])] {
            if !isEmpty { blocks.append((currentFirst, current)) }
            current = []
            isEmpty = true
            return blocks
        }
    }
}

/// Malformed bytes found in a full-text engine table (converted to `BoxwoodError.corrupted` at the API).
enum FullTextFormatError: Error {
    case malformedBlock
}

/// The number of bytes of `value` as an unsigned LEB128 varint.
@inline(__always)
func varintSize(_ value: UInt64) -> Int {
    var v = value, n = 1
    while v >= 0x80 { v >>= 7; n += 1 }
    return n
}

/// Appends `value` as an unsigned LEB128 varint.
@inline(__always)
func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
    }
    bytes.append(UInt8(truncatingIfNeeded: v))
}
