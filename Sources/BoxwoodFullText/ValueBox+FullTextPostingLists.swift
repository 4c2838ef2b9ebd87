@_spi(EngineTables) import BoxwoodStore
/// Updates of one posting list (the blocks under one list prefix; format in `FullTextPostingBlock`).
extension ValueBox {
    /// Appends `count` entries (`entry(i)`: docId and encoded positions; docIds ascending and larger than every
    /// docId of the list) to list `prefix` of `table`: the list's last block is extended, and new blocks start
    /// whenever one is full. Cost: one descending seek, then one write per changed or new block.
    func appendToFullTextList(_ table: ValueBoxTable, prefix: UnsafeRawBufferPointer, hasPositions: Bool, count: Int,
                              _ entry: (Int) -> (docId: UInt64, positions: UnsafeRawBufferPointer)) throws(BoxwoodError) {
        guard count > 0 else { return }
        let firstNew = entry(0).docId
        var builder = FullTextPostingBlock.Builder(hasPositions: hasPositions)
        var lastBlock: (firstDocId: UInt64, length: Int)? = nil
        var malformed = false
        // The list's last block: the largest key below `prefix ‖ FF…FF` (docIds never reach 2^64 − 1).
        var start = ValueBoxKey(length: prefix.count + 8)
        start.setBytes(0, prefix)
        start.setUInt64(prefix.count, value: .max)
        try withRange(table, start: start, end: ValueBoxKey(bytes: prefix), limit: 1) { key, value in
            let first = FullTextPostingBlock.firstDocId(ofKey: key)
            var reader = FullTextPostingBlock.Reader(firstDocId: first, value: value, hasPositions: hasPositions)
            do throws(FullTextFormatError) {
                while try reader.next() {}
            } catch {
                malformed = true
                return false
            }
            guard reader.docId < firstNew else { malformed = true; return false }
            lastBlock = (first, value.count)
            builder = FullTextPostingBlock.Builder(continuing: value, firstDocId: first, lastDocId: reader.docId, hasPositions: hasPositions)
            return false
        }
        if malformed { throw fullTextCorruption(table, "a block of a list is malformed or not below the entries appended to it") }
        for i in 0..<count {
            let (docId, positions) = entry(i)
            builder.append(docId, positions: positions)
        }
        // `start` is the scratch key of the blocks written (same prefix, same length).
        for (index, block) in builder.finish().enumerated() {
            // The last block, unchanged when the appended entries all went to new blocks.
            if index == 0, let lastBlock, lastBlock.firstDocId == block.firstDocId, lastBlock.length == block.value.count { continue }
            start.setUInt64(prefix.count, value: block.firstDocId)
            try withBytes(block.value) { (bytes) throws(BoxwoodError) in try set(table, key: start, bytes: bytes) }
        }
    }

    /// Removes the entry of `docId` from list `prefix` of `table` (it must be there): its block is rewritten
    /// without it, or removed when it was the block's only entry. With `secure`, the old block is removed with
    /// `secure: true` before the new one is written, so the engine scrubs the old bytes (which name the document)
    /// at the next checkpoint.
    func removeFromFullTextList(_ table: ValueBoxTable, prefix: UnsafeRawBufferPointer, hasPositions: Bool, docId: UInt64,
                                secure: Bool) throws(BoxwoodError) {
        let prefixBytes = [UInt8](prefix)
        var found: (key: ValueBoxKey, blocks: [(firstDocId: UInt64, value: [UInt8])])? = nil
        var malformed = false
        var key = ValueBoxKey(length: prefixBytes.count + 8)
        prefixBytes.withUnsafeBytes { key.setBytes(0, $0) }
        key.setUInt64(prefixBytes.count, value: docId &+ 1)
        // The block that holds `docId`: the largest key not above `prefix ‖ docId`.
        try withRange(table, start: key, end: ValueBoxKey(prefixBytes), limit: 1) { blockKey, value in
            var reader = FullTextPostingBlock.Reader(firstDocId: FullTextPostingBlock.firstDocId(ofKey: blockKey), value: value, hasPositions: hasPositions)
            var builder = FullTextPostingBlock.Builder(hasPositions: hasPositions, maxBytes: .max)
            var hit = false
            do throws(FullTextFormatError) {
                while try reader.next() {
                    if reader.docId == docId { hit = true } else { builder.append(reader.docId, positions: reader.positions) }
                }
            } catch {
                malformed = true
                return false
            }
            if hit { found = (ValueBoxKey(bytes: blockKey), builder.finish()) }
            return false
        }
        if malformed { throw fullTextCorruption(table, "a block of a list is malformed") }
        guard let found else { throw fullTextCorruption(table, "document \(docId) is missing from a list its record names") }
        let remaining = found.blocks.first  // at most one block: the builder never splits (maxBytes: .max)
        key.setUInt64(prefixBytes.count, value: remaining?.firstDocId ?? 0)
        if secure || remaining == nil || remaining!.firstDocId != found.key.getUInt64(found.key.length - 8) {
            try remove(table, key: found.key, secure: secure)
        }
        if let remaining {
            try withBytes(remaining.value) { (bytes) throws(BoxwoodError) in try set(table, key: key, bytes: bytes) }
        }
    }

    /// The error for malformed full-text data in `table`.
    func fullTextCorruption(_ table: ValueBoxTable, _ reason: String) -> BoxwoodError {
        .corrupted(file: path, page: nil, reason: "full-text engine table \(table.id): \(reason)")
    }
}
