@_spi(EngineTables) import BoxwoodStore
/// Updates of one posting list (the blocks under one list prefix; format in `FullTextPostingBlock`).
extension ValueBox {
    /// Appends `count` entries (`entry(i)`: docId and encoded positions; docIds ascending and larger than every
    /// docId of the list) to list `prefix` of `table`: the list's last block is extended, and new blocks start
    /// whenever one is full. Cost: one descent (`updateLastEntry`) that reads the last block and writes the first
    /// changed or new block, then one `set` per further new block.
    func appendToFullTextList(_ table: ValueBoxTable, prefix: UnsafeRawBufferPointer, hasPositions: Bool, count: Int,
                              _ entry: (Int) -> (docId: UInt64, positions: UnsafeRawBufferPointer)) throws(BoxwoodError) {
        guard count > 0 else { return }
        let firstNew = entry(0).docId
        // The list's last block: the last key at most `prefix ‖ FF…FF` (docIds never reach 2^64 − 1) with the prefix.
        var key = ValueBoxKey(length: prefix.count + 8)
        key.setBytes(0, prefix)
        key.setUInt64(prefix.count, value: .max)
        var blocks: [(firstDocId: UInt64, value: [UInt8])] = []
        // The blocks `updateLastEntry` wrote: the first one, or none when the last block is unchanged and nothing follows.
        var written = 0
        try updateLastEntry(table, atOrBelow: key, prefixLength: prefix.count) { (lastKey, lastValue) throws(BoxwoodError) -> LastEntryUpdate in
            // (Made once: the block size is a task-local value.)
            var builder: FullTextPostingBlock.Builder
            var lastBlock: (firstDocId: UInt64, length: Int)? = nil
            if let lastKey, let lastValue {
                let first = FullTextPostingBlock.firstDocId(ofKey: lastKey)
                let last: UInt64
                do throws(FullTextFormatError) {
                    last = try FullTextPostingBlock.lastDocId(firstDocId: first, value: lastValue, hasPositions: hasPositions)
                } catch {
                    throw fullTextCorruption(table, "a block of a list is malformed")
                }
                guard last < firstNew else { throw fullTextCorruption(table, "a block of a list is not below the entries appended to it") }
                lastBlock = (first, lastValue.count)
                builder = FullTextPostingBlock.Builder(continuing: lastValue, firstDocId: first, lastDocId: last, hasPositions: hasPositions)
            } else {
                builder = FullTextPostingBlock.Builder(hasPositions: hasPositions)
            }
            for i in 0..<count {
                let (docId, positions) = entry(i)
                builder.append(docId, positions: positions)
            }
            blocks = builder.finish()
            if let lastBlock, lastBlock.firstDocId == blocks[0].firstDocId {
                // The last block, unchanged when the appended entries all went to new blocks.
                if lastBlock.length != blocks[0].value.count {
                    written = 1
                    return .replace(value: blocks[0].value)
                }
                guard blocks.count > 1 else { return .keep }
                written = 2
                key.setUInt64(prefix.count, value: blocks[1].firstDocId)
                return .insert(key: key, value: blocks[1].value)
            }
            written = 1
            key.setUInt64(prefix.count, value: blocks[0].firstDocId)
            return .insert(key: key, value: blocks[0].value)
        }
        // `key` is the scratch key of the blocks written (same prefix, same length).
        for block in blocks.dropFirst(written) {
            key.setUInt64(prefix.count, value: block.firstDocId)
            try withBytes(block.value) { (bytes) throws(BoxwoodError) in try set(table, key: key, bytes: bytes) }
        }
    }

    /// Applies `edits` (one per docId, ascending: `FullTextListEdit.resolve`), then `appends` (ascending, above
    /// every docId in the list's blocks), to list `prefix` of `table`. An edit of a docId among the appends changes
    /// the appends; any other edit rewrites the block that holds or would hold its docId, once for all the edits
    /// that fall in that block. Throws corruption when an entry an edit expects (`expectPresent`) is missing, or
    /// one it does not expect is there.
    func editFullTextList(_ table: ValueBoxTable, prefix: UnsafeRawBufferPointer, hasPositions: Bool, edits: [FullTextListEdit],
                          appends: [(docId: UInt64, positions: UnsafeRawBufferPointer)]) throws(BoxwoodError) {
        let firstAppend = appends.first?.docId ?? .max
        let split = edits.firstIndex { $0.docId >= firstAppend } ?? edits.count
        if split > 0 { try editFullTextBlocks(table, prefix: [UInt8](prefix), hasPositions: hasPositions, edits: edits[..<split]) }
        if appends.isEmpty { return }
        var merged: [(docId: UInt64, positions: UnsafeRawBufferPointer)] = []
        merged.reserveCapacity(appends.count + edits.count - split)
        var e = split
        for append in appends {
            while e < edits.count && edits[e].docId < append.docId {
                guard !edits[e].expectPresent else { throw missingEntry(table, edits[e].docId) }
                if edits[e].present { merged.append((edits[e].docId, edits[e].positions)) }
                e += 1
            }
            if e < edits.count && edits[e].docId == append.docId {
                guard edits[e].expectPresent else { throw unexpectedEntry(table, append.docId) }
                if edits[e].present { merged.append((append.docId, edits[e].positions)) }
                e += 1
            } else {
                merged.append(append)
            }
        }
        while e < edits.count {
            guard !edits[e].expectPresent else { throw missingEntry(table, edits[e].docId) }
            if edits[e].present { merged.append((edits[e].docId, edits[e].positions)) }
            e += 1
        }
        try appendToFullTextList(table, prefix: prefix, hasPositions: hasPositions, count: merged.count) { merged[$0] }
    }

    /// Applies `edits` (ascending, one per docId) to the blocks of list `prefix`. Each edit's block is the last one
    /// whose first docId is not above it, or the list's first block for an edit below every block; edits in the
    /// same block are applied by one rewrite (split like appended blocks when it grows past
    /// `FullTextPostingBlock.maxBytes`). Every block is located before any is rewritten, and the rewrite of a
    /// block keeps its entries between its old first docId (or its lowest edit) and the next block's, so the
    /// blocks stay disjoint. A block that held a securely removed entry is removed with `secure: true` first.
    private func editFullTextBlocks(_ table: ValueBoxTable, prefix: [UInt8], hasPositions: Bool,
                                    edits: ArraySlice<FullTextListEdit>) throws(BoxwoodError) {
        var key = ValueBoxKey(length: prefix.count + 8)
        prefix.withUnsafeBytes { key.setBytes(0, $0) }
        let (listStart, listEnd) = FullTextKeys.bounds(of: prefix)
        // (the block's first docId, nil when the list has no block; its value; the edits in it)
        var groups: [(first: UInt64?, value: [UInt8], edits: Range<Int>)] = []
        for index in edits.indices {
            key.setUInt64(prefix.count, value: edits[index].docId &+ 1)
            // The block is copied unless it is the previous edit's (closures, not local functions: no boxed
            // captures and dynamic exclusivity checks on this path).
            let previous: UInt64? = groups.last?.first ?? nil
            var first: UInt64? = nil
            var value: [UInt8]? = nil
            try withRange(table, start: key, end: listStart, limit: 1) { blockKey, bytes in
                let blockFirst = FullTextPostingBlock.firstDocId(ofKey: blockKey)
                first = blockFirst
                if previous != blockFirst { value = [UInt8](bytes) }
                return false
            }
            if first == nil {
                try withRange(table, start: listStart, end: listEnd, limit: 1) { blockKey, bytes in
                    let blockFirst = FullTextPostingBlock.firstDocId(ofKey: blockKey)
                    first = blockFirst
                    if previous != blockFirst { value = [UInt8](bytes) }
                    return false
                }
            }
            if !groups.isEmpty && previous == first {
                groups[groups.count - 1].edits = groups[groups.count - 1].edits.lowerBound..<(index + 1)
            } else {
                groups.append((first, value ?? [], index..<(index + 1)))
            }
        }
        for group in groups {
            // Entries and edits merged by docId; an edit replaces or drops the entry of its docId.
            var builder = FullTextPostingBlock.Builder(hasPositions: hasPositions)
            var e = group.edits.lowerBound
            let end = group.edits.upperBound
            var secure = false
            var failure: BoxwoodError? = nil
            if let first = group.first {
                var malformed = false
                group.value.withUnsafeBytes { value in
                    var reader = FullTextPostingBlock.Reader(firstDocId: first, value: value, hasPositions: hasPositions)
                    // Whether the builder's last entry is the reader's previous one: then an unchanged entry's bytes
                    // (its delta from that entry) are copied instead of encoded again.
                    var follows = false
                    do throws(FullTextFormatError) {
                        while try reader.next() {
                            while e < end && edits[e].docId < reader.docId {
                                let edit = edits[e]
                                if edit.expectPresent { failure = missingEntry(table, edit.docId); return }
                                if edit.present { builder.append(edit.docId, positions: edit.positions) }
                                follows = false
                                e += 1
                            }
                            if e < end && edits[e].docId == reader.docId {
                                let edit = edits[e]
                                if !edit.expectPresent { failure = unexpectedEntry(table, edit.docId); return }
                                if edit.present { builder.append(edit.docId, positions: edit.positions) }
                                secure = secure || edit.secure
                                follows = false
                                e += 1
                            } else if follows {
                                builder.appendEncoded(reader.entryBytes, docId: reader.docId, positions: reader.positions)
                            } else {
                                builder.append(reader.docId, positions: reader.positions)
                                follows = true
                            }
                        }
                    } catch {
                        malformed = true
                    }
                }
                if malformed { throw fullTextCorruption(table, "a block of a list is malformed") }
            }
            if let failure { throw failure }
            while e < end {
                let edit = edits[e]
                if edit.expectPresent { throw missingEntry(table, edit.docId) }
                if edit.present { builder.append(edit.docId, positions: edit.positions) }
                e += 1
            }
            let blocks = builder.finish()
            if let first = group.first, secure || blocks.first?.firstDocId != first {
                key.setUInt64(prefix.count, value: first)
                try remove(table, key: key, secure: secure)
            }
            for block in blocks {
                key.setUInt64(prefix.count, value: block.firstDocId)
                try withBytes(block.value) { (bytes) throws(BoxwoodError) in try set(table, key: key, bytes: bytes) }
            }
        }
    }

    /// The error for an edit that expects document `docId` in a list that lacks it.
    private func missingEntry(_ table: ValueBoxTable, _ docId: UInt64) -> BoxwoodError {
        fullTextCorruption(table, "document \(docId) is missing from a list its record names")
    }

    /// The error for an edit that adds document `docId` to a list that already has it.
    private func unexpectedEntry(_ table: ValueBoxTable, _ docId: UInt64) -> BoxwoodError {
        fullTextCorruption(table, "document \(docId) is in a list its record does not name")
    }

    /// The error for malformed full-text data in `table`.
    func fullTextCorruption(_ table: ValueBoxTable, _ reason: String) -> BoxwoodError {
        .corrupted(file: path, page: nil, reason: "full-text engine table \(table.id): \(reason)")
    }
}
