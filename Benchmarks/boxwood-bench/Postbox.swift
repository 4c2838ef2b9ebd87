/// The tables of the Postbox-shaped workload, with Postbox's key layouts (integers big-endian).
private enum PostboxTable {
    /// Message history: peerId(8) | namespace(4) | timestamp(4) | id(4) → the message.
    static let history: Int32 = 10
    /// Tag index: peerId(8) | tag(4) | timestamp(4) | id(4) → nothing.
    static let tags: Int32 = 11
    /// Chat list, ordered by its index: timestamp(4) | peerId(8) → the entry.
    static let chatList: Int32 = 12
    /// Read state: peerId(8) → the state.
    static let readState: Int32 = 13
}

/// One planned transaction: a message arrives in a chat.
private struct ArrivingMessage {
    /// The chat (an index into the peer ids).
    let peer: Int
    let timestamp: UInt32
    let id: UInt32
    let tag: UInt32
    /// The chat's chat-list timestamp before this message; 0 when the chat is new.
    let previousTimestamp: UInt32
}

extension Bench {
    private static let baseTimestamp: UInt32 = 1_700_000_000
    private static let chatListEntryLength = 16
    private static let readStateLength = 32
    /// Read-state values come from the value pool at indices above every chat-list index.
    private static let readStateIndexBase = 1 << 24

    /// Each transaction does what Postbox does when a message arrives: reads the chat's read state, inserts the message
    /// into the history table and the tag index, moves the chat to the top of the chat list (removing its old entry)
    /// and overwrites the read state. Ops are transactions.
    func postboxTransactions<E: DatabaseEngine>(_: E.Type) throws(BenchError) -> Measurement {
        let workload = WorkloadID.postbox.rawValue
        func failure(_ detail: String) -> BenchError { .verification(engine: E.kind, workload: workload, detail: detail) }
        let directory = root + "/" + E.kind.rawValue + "-postbox"
        let messageLength = sizes.postboxMessageLength
        var rng = generator(for: .postbox)
        let peerIds = (0..<sizes.postboxPeers).map { _ in rng.next() }
        var lastTimestamp = [UInt32](repeating: 0, count: peerIds.count)
        var lastId = [UInt32](repeating: 0, count: peerIds.count)
        var plan: [ArrivingMessage] = []
        plan.reserveCapacity(sizes.postboxTransactions)
        for n in 0..<sizes.postboxTransactions {
            let peer = rng.below(peerIds.count)
            let timestamp = Bench.baseTimestamp + UInt32(n)
            lastId[peer] += 1
            plan.append(ArrivingMessage(peer: peer, timestamp: timestamp, id: lastId[peer], tag: 1 << UInt32(rng.below(8)),
                                        previousTimestamp: lastTimestamp[peer]))
            lastTimestamp[peer] = timestamp
        }
        let expectedReads = plan.reduce(0) { $0 + ($1.previousTimestamp != 0 ? 1 : 0) }

        let keyBuffer = PostboxKeys()
        let randomValues = self.randomValues
        let textValues = self.textValues
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        let engine = try E(directory: directory, durability: .normal)
        let sink = ReadSink()
        var reads = 0
        let watch = Stopwatch()
        for n in 0..<plan.count {
            let message = plan[n]
            keyBuffer.set(message, peerId: peerIds[message.peer])
            try engine.beginBatch()
            if try engine.get(PostboxTable.readState, key: keyBuffer.readState, { sink.consume($0) }) != nil { reads += 1 }
            try engine.put(PostboxTable.history, key: keyBuffer.history, value: textValues.value(n, version: 1, length: messageLength))
            try engine.put(PostboxTable.tags, key: keyBuffer.tag, value: empty)
            if message.previousTimestamp != 0 { try engine.remove(PostboxTable.chatList, key: keyBuffer.previousChatListEntry) }
            try engine.put(PostboxTable.chatList, key: keyBuffer.chatListEntry,
                           value: randomValues.value(message.peer, version: message.timestamp, length: Bench.chatListEntryLength))
            try engine.put(PostboxTable.readState, key: keyBuffer.readState,
                           value: randomValues.value(Bench.readStateIndexBase + message.peer, version: message.id, length: Bench.readStateLength))
            try engine.commitBatch()
        }
        try engine.close()
        let seconds = watch.seconds
        let bytes = diskUsage(directory)
        guard reads == expectedReads else { throw failure("\(reads) read states found, expected \(expectedReads)") }

        // Verification: a sample of messages and tag entries, every read state, and the whole chat list in order.
        let reader = try E(directory: directory, durability: .normal)
        try reader.beginBatch()
        for _ in 0..<min(plan.count, 200) {
            let n = rng.below(plan.count)
            keyBuffer.set(plan[n], peerId: peerIds[plan[n].peer])
            let expected = textValues.value(n, version: 1, length: messageLength)
            guard try reader.get(PostboxTable.history, key: keyBuffer.history, { bytesEqual($0, expected) }) == true else {
                throw failure("message #\(n) is missing or wrong")
            }
            guard try reader.get(PostboxTable.tags, key: keyBuffer.tag, { $0.count }) == 0 else { throw failure("tag entry #\(n) is missing or wrong") }
        }
        let chats = (0..<peerIds.count).filter { lastTimestamp[$0] != 0 }.sorted { lastTimestamp[$0] < lastTimestamp[$1] }
        for peer in chats {
            keyBuffer.set(ArrivingMessage(peer: peer, timestamp: lastTimestamp[peer], id: lastId[peer], tag: 0, previousTimestamp: 0), peerId: peerIds[peer])
            let expected = randomValues.value(Bench.readStateIndexBase + peer, version: lastId[peer], length: Bench.readStateLength)
            guard try reader.get(PostboxTable.readState, key: keyBuffer.readState, { bytesEqual($0, expected) }) == true else {
                throw failure("the read state of chat #\(peer) is missing or wrong")
            }
        }
        var position = 0
        var ordered = true
        let listed = try reader.scan(PostboxTable.chatList, after: empty, count: peerIds.count + 1) { key, _ in
            if position < chats.count {
                let peer = chats[position]
                keyBuffer.set(ArrivingMessage(peer: peer, timestamp: lastTimestamp[peer], id: 0, tag: 0, previousTimestamp: 0), peerId: peerIds[peer])
                ordered = ordered && bytesEqual(key, keyBuffer.chatListEntry)
            }
            position += 1
        }
        guard ordered && listed == chats.count else { throw failure("the chat list has \(listed) entries (expected \(chats.count))\(ordered ? "" : ", some wrong")") }
        try reader.commitBatch()
        try reader.close()
        removeTree(directory)

        let rawBytes = plan.count * (20 + messageLength + 20) + chats.count * (12 + Bench.chatListEntryLength + 8 + Bench.readStateLength)
        return Measurement(row: workload, engine: E.kind, ops: plan.count, seconds: seconds, bytesOnDisk: bytes, rawBytes: rawBytes,
                           checksum: sink.checksum)
    }
}

/// The keys of one Postbox-shaped transaction, built in place in one buffer.
private final class PostboxKeys {
    private let bytes = UnsafeMutableRawPointer.allocate(byteCount: 72, alignment: 8)

    deinit { bytes.deallocate() }

    var history: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes, count: 20) }
    var tag: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes + 20, count: 20) }
    var previousChatListEntry: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes + 40, count: 12) }
    var chatListEntry: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes + 52, count: 12) }
    var readState: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes + 64, count: 8) }

    @inline(__always)
    func set(_ message: ArrivingMessage, peerId: UInt64) {
        // history: peerId | namespace 0 | timestamp | id
        bytes.storeBytes(of: peerId.bigEndian, toByteOffset: 0, as: UInt64.self)
        bytes.storeBytes(of: UInt32(0), toByteOffset: 8, as: UInt32.self)
        bytes.storeBytes(of: message.timestamp.bigEndian, toByteOffset: 12, as: UInt32.self)
        bytes.storeBytes(of: message.id.bigEndian, toByteOffset: 16, as: UInt32.self)
        // tag index: peerId | tag | timestamp | id
        bytes.storeBytes(of: peerId.bigEndian, toByteOffset: 20, as: UInt64.self)
        bytes.storeBytes(of: message.tag.bigEndian, toByteOffset: 28, as: UInt32.self)
        bytes.storeBytes(of: message.timestamp.bigEndian, toByteOffset: 32, as: UInt32.self)
        bytes.storeBytes(of: message.id.bigEndian, toByteOffset: 36, as: UInt32.self)
        // chat list, before and after: timestamp | peerId
        bytes.storeBytes(of: message.previousTimestamp.bigEndian, toByteOffset: 40, as: UInt32.self)
        bytes.storeBytes(of: peerId.bigEndian, toByteOffset: 44, as: UInt64.self)
        bytes.storeBytes(of: message.timestamp.bigEndian, toByteOffset: 52, as: UInt32.self)
        bytes.storeBytes(of: peerId.bigEndian, toByteOffset: 56, as: UInt64.self)
        // read state: peerId
        bytes.storeBytes(of: peerId.bigEndian, toByteOffset: 64, as: UInt64.self)
    }
}
