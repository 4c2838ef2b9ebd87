import BoxwoodStore
/// The kind of a queued operation (the app defines the values: synchronize read state, upload media…).
public struct PeerOperationLogTag: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static func < (lhs: PeerOperationLogTag, rhs: PeerOperationLogTag) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "\(rawValue)" }
}

/// How an entry's tag-local index is chosen.
public enum PeerOperationLogIndex: Equatable {
    /// The next index of (peer, tag) from the metadata counter.
    case automatic
    /// This index (the counter is moved past it).
    case manual(Int32)
}

/// Whether a new entry joins its tag's merged queue.
public enum StorePeerOperationLogEntryTagMergedIndex: Equatable {
    case none
    case automatic
}

/// One queued operation.
public struct PeerOperationLogEntry {
    public let peerId: PeerId
    public let tag: PeerOperationLogTag
    /// The position in the (peer, tag) queue.
    public let tagLocalIndex: Int32
    /// The position in the tag's merged queue across all peers, if the entry is in it.
    public let mergedIndex: Int32?
    /// The operation's payload (a type registered with `declareEncodable`).
    public let contents: any PostboxCoding
}

/// A change of a tag's merged queue, for the change record (merged operation-log views replay these).
public enum PeerMergedOperationLogOperation {
    /// The entry joined its tag's merged queue.
    case append(PeerOperationLogEntry)
    /// These merged indices left the tag's queue.
    case remove(tag: PeerOperationLogTag, mergedIndices: Set<Int32>)
    /// The contents of an entry in the merged queue changed.
    case updateContents(PeerOperationLogEntry)
}

/// How `PeerOperationLogTable/updateEntry(_:tag:tagLocalIndex:_:)` changes an entry.
public struct PeerOperationLogEntryUpdate {
    public enum MergedIndex {
        /// Keep it as it is.
        case none
        /// Leave the merged queue.
        case remove
        /// Go to the end of the merged queue (join it, or move there).
        case newAutomatic
    }

    public enum Contents {
        case none
        case update(any PostboxCoding)
    }

    public var mergedIndex: MergedIndex
    public var contents: Contents

    public init(mergedIndex: MergedIndex, contents: Contents) {
        self.mergedIndex = mergedIndex
        self.contents = contents
    }
}

public enum PeerOperationLogError: Error, Equatable, CustomStringConvertible {
    /// A counter reached Int32.max (`peerId` nil: the tag's merged counter).
    case indicesExhausted(peerId: PeerId?, tag: PeerOperationLogTag)
    /// The merged queue points at an entry that is missing or not in the merged queue at that index.
    case danglingMergedIndex(tag: PeerOperationLogTag, mergedIndex: Int32)

    public var description: String {
        switch self {
        case let .indicesExhausted(peerId, tag):
            return "operation log: the \(peerId.map { "local index of peer \($0)" } ?? "merged index") of tag \(tag) reached Int32.max"
        case let .danglingMergedIndex(tag, mergedIndex):
            return "operation log: merged index \(mergedIndex) of tag \(tag) has no matching entry"
        }
    }
}

/// A persistent outbound queue per (peer, tag) (table 31, binary keys):
/// peerId Int64 BE ‖ tag UInt8 ‖ tagLocalIndex Int32 BE → hasMergedIndex UInt8 (0 or 1) ‖ [mergedIndex Int32 LE]
/// ‖ contents length Int32 LE ‖ root-encoded contents.
///
/// Entries of a (peer, tag) come in key order: ascending tag-local index, with negative (manual) indices after
/// the non-negative ones, because keys are big-endian with no sign flip. Entries may also be in their tag's
/// merged queue (``PeerMergedOperationLogIndexTable``), whose changes are recorded in ``mergedOperations``.
/// The counters live in ``PeerOperationLogMetadataTable``. Write-through, no cache.
final class PeerOperationLogTable: Table {
    static let tableId: Int32 = 31
    static let descriptor = ValueBoxTable(id: tableId, keyType: .binary)

    let metadataTable: PeerOperationLogMetadataTable
    let mergedIndexTable: PeerMergedOperationLogIndexTable
    private let encoder = PostboxEncoder()
    private let valueBuffer = ByteBuffer(capacity: 256)

    /// The merged-queue changes of this transaction, in order.
    private(set) var mergedOperations: [PeerMergedOperationLogOperation] = []

    func resetChanges() {
        mergedOperations.removeAll()
    }

    init(valueBox: ValueBox, metadataTable: PeerOperationLogMetadataTable, mergedIndexTable: PeerMergedOperationLogIndexTable,
         useCaches: Bool = true) {
        self.metadataTable = metadataTable
        self.mergedIndexTable = mergedIndexTable
        super.init(valueBox: valueBox, table: Self.descriptor, useCaches: useCaches)
    }

    // MARK: Keys and values

    private static func key(_ peerId: PeerId, _ tag: PeerOperationLogTag, _ tagLocalIndex: Int32) -> ValueBoxKey {
        var key = ValueBoxKey(length: 13)
        key.setInt64(0, value: peerId.toInt64())
        key.setUInt8(8, value: tag.rawValue)
        key.setInt32(9, value: tagLocalIndex)
        return key
    }

    private static func prefix(_ peerId: PeerId, _ tag: PeerOperationLogTag) -> ValueBoxKey {
        var key = ValueBoxKey(length: 9)
        key.setInt64(0, value: peerId.toInt64())
        key.setUInt8(8, value: tag.rawValue)
        return key
    }

    private func write(_ entry: PeerOperationLogEntry) throws {
        encoder.reset()
        encoder.encodeRootObject(entry.contents)
        try encoder.throwIfEncodingFailed()
        valueBuffer.reset()
        if let mergedIndex = entry.mergedIndex {
            valueBuffer.append(UInt8(1))
            valueBuffer.append(mergedIndex)
        } else {
            valueBuffer.append(UInt8(0))
        }
        valueBuffer.append(Int32(encoder.length))
        encoder.withBytes { valueBuffer.append($0) }
        try valueBox.set(table, key: Self.key(entry.peerId, entry.tag, entry.tagLocalIndex), value: valueBuffer)
    }

    /// Decodes a stored value (bounds-checked: a damaged value throws).
    private static func decode(_ peerId: PeerId, _ tag: PeerOperationLogTag, _ tagLocalIndex: Int32,
                               _ bytes: UnsafeRawBufferPointer) throws(PostboxDecodingError) -> PeerOperationLogEntry {
        var reader = ByteReader(bytes)
        let mergedIndex: Int32?
        let length: Int32
        do throws(ByteReadError) {
            switch try reader.uint8() {
            case 0: mergedIndex = nil
            case 1: mergedIndex = try reader.int32()
            case let flag: throw .undefinedByte(flag, offset: 0)
            }
            length = try reader.int32()
        } catch let .undefinedByte(flag, offset) {
            throw .invalidBool(flag, offset: offset)
        } catch {
            throw PostboxDecodingError(error)
        }
        guard length >= 0, Int(length) == reader.remaining else { throw .invalidLength(Int64(length), offset: reader.offset - 4) }
        let contents = try decodeRootObject(UnsafeRawBufferPointer(rebasing: bytes[reader.offset...]), as: (any PostboxCoding).self)
        return PeerOperationLogEntry(peerId: peerId, tag: tag, tagLocalIndex: tagLocalIndex, mergedIndex: mergedIndex, contents: contents)
    }

    // MARK: Reads

    /// The entry at (peer, tag, index), nil when absent.
    func getEntry(_ peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32) throws -> PeerOperationLogEntry? {
        try valueBox.decodeValue(table, key: Self.key(peerId, tag, tagLocalIndex)) { (bytes) throws(PostboxDecodingError) in
            try Self.decode(peerId, tag, tagLocalIndex, bytes)
        }
    }

    /// The entries of (peer, tag) in key order (see the type's documentation); `body` returns false to stop.
    func enumerateEntries(_ peerId: PeerId, tag: PeerOperationLogTag, _ body: (PeerOperationLogEntry) throws -> Bool) throws {
        for entry in try entries(peerId, tag: tag) {
            if try !body(entry) { return }
        }
    }

    /// The entries of (peer, tag) in key order, at most `limit` (`limit <= 0`: all).
    func entries(_ peerId: PeerId, tag: PeerOperationLogTag, limit: Int = 0) throws -> [PeerOperationLogEntry] {
        let prefix = Self.prefix(peerId, tag)
        var result: [PeerOperationLogEntry] = []
        var failure: PostboxDecodingError?
        try valueBox.withRange(table, start: prefix, end: prefix.paddedWithFF(5), limit: limit) { key, value in
            guard key.count == 13 else { return true }
            let index = Int32(bitPattern: UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 9, as: UInt32.self)))
            do throws(PostboxDecodingError) {
                result.append(try Self.decode(peerId, tag, index, value))
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return result
    }

    /// Up to `limit` entries (`limit <= 0`: all) of the tag's merged queue with a merged index ≥ `fromIndex`,
    /// in queue order.
    func getMergedEntries(_ tag: PeerOperationLogTag, fromIndex: Int32, limit: Int) throws -> [PeerOperationLogEntry] {
        var result: [PeerOperationLogEntry] = []
        for position in try mergedIndexTable.entries(tag, fromIndex: fromIndex, limit: limit) {
            guard let entry = try getEntry(position.peerId, tag: tag, tagLocalIndex: position.tagLocalIndex),
                  entry.mergedIndex == position.mergedIndex else {
                throw PeerOperationLogError.danglingMergedIndex(tag: tag, mergedIndex: position.mergedIndex)
            }
            result.append(entry)
        }
        return result
    }

    /// The index the next automatic entry of (peer, tag) would get.
    func nextTagLocalIndex(_ peerId: PeerId, tag: PeerOperationLogTag) throws -> Int32 {
        try metadataTable.nextLocalIndex(peerId, tag)
    }

    // MARK: Changes

    /// Adds an entry and returns it. An automatic index is the next of (peer, tag); a manual index replaces an
    /// entry already there (which leaves the merged queue) and moves the counter past it.
    @discardableResult
    func addEntry(_ peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: PeerOperationLogIndex,
                  tagMergedIndex: StorePeerOperationLogEntryTagMergedIndex, contents: any PostboxCoding) throws -> PeerOperationLogEntry {
        let index: Int32
        switch tagLocalIndex {
        case .automatic:
            index = try metadataTable.takeNextLocalIndex(peerId, tag)
        case let .manual(manual):
            index = manual
            try metadataTable.advanceLocalIndex(peerId, tag, past: manual)
        }
        if let existing = try getEntry(peerId, tag: tag, tagLocalIndex: index), let mergedIndex = existing.mergedIndex {
            try mergedIndexTable.remove(tag, mergedIndex: mergedIndex)
            mergedOperations.append(.remove(tag: tag, mergedIndices: [mergedIndex]))
        }
        var mergedIndex: Int32?
        if tagMergedIndex == .automatic {
            mergedIndex = try metadataTable.takeNextMergedIndex(tag)
        }
        let entry = PeerOperationLogEntry(peerId: peerId, tag: tag, tagLocalIndex: index, mergedIndex: mergedIndex, contents: contents)
        try write(entry)
        if let mergedIndex {
            try mergedIndexTable.add(tag, mergedIndex: mergedIndex, peerId: peerId, tagLocalIndex: index)
            mergedOperations.append(.append(entry))
        }
        return entry
    }

    /// Removes the entry at (peer, tag, index) and its merged-queue position; false when there was none.
    @discardableResult
    func removeEntry(_ peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32) throws -> Bool {
        guard let entry = try getEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex) else { return false }
        if let mergedIndex = entry.mergedIndex {
            try mergedIndexTable.remove(tag, mergedIndex: mergedIndex)
            mergedOperations.append(.remove(tag: tag, mergedIndices: [mergedIndex]))
        }
        try valueBox.remove(table, key: Self.key(peerId, tag, tagLocalIndex))
        return true
    }

    /// Removes every entry of (peer, tag) (the counter keeps its value, so indices are not reused).
    func removeAllEntries(_ peerId: PeerId, tag: PeerOperationLogTag) throws {
        let prefix = Self.prefix(peerId, tag)
        var mergedIndices = Set<Int32>()
        for entry in try entries(peerId, tag: tag) {
            if let mergedIndex = entry.mergedIndex {
                try mergedIndexTable.remove(tag, mergedIndex: mergedIndex)
                mergedIndices.insert(mergedIndex)
            }
        }
        try valueBox.removeRange(table, start: prefix, end: prefix.paddedWithFF(5))
        if !mergedIndices.isEmpty {
            mergedOperations.append(.remove(tag: tag, mergedIndices: mergedIndices))
        }
    }

    /// Replaces the contents of the entry at (peer, tag, index); false when there is none.
    @discardableResult
    func updateEntryContents(_ peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32, contents: any PostboxCoding) throws -> Bool {
        var found = false
        try updateEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex) { entry in
            found = entry != nil
            return PeerOperationLogEntryUpdate(mergedIndex: .none, contents: .update(contents))
        }
        return found
    }

    /// Changes the entry at (peer, tag, index) as `f` says (`f` gets nil when there is none, and then nothing
    /// happens). Records `.updateContents` for new contents of an entry that stays in the merged queue,
    /// `.remove` for leaving it, and `.remove` (when it was in it) then `.append` for moving to its end.
    func updateEntry(_ peerId: PeerId, tag: PeerOperationLogTag, tagLocalIndex: Int32,
                     _ f: (PeerOperationLogEntry?) throws -> PeerOperationLogEntryUpdate) throws {
        let current = try getEntry(peerId, tag: tag, tagLocalIndex: tagLocalIndex)
        let update = try f(current)
        guard let current else { return }
        var contents = current.contents
        var contentsChanged = false
        if case let .update(newContents) = update.contents {
            contents = newContents
            contentsChanged = true
        }
        var mergedIndex = current.mergedIndex
        var removedMergedIndex: Int32?
        switch update.mergedIndex {
        case .none:
            break
        case .remove:
            removedMergedIndex = current.mergedIndex
            mergedIndex = nil
        case .newAutomatic:
            removedMergedIndex = current.mergedIndex
            mergedIndex = try metadataTable.takeNextMergedIndex(tag)
        }
        let entry = PeerOperationLogEntry(peerId: peerId, tag: tag, tagLocalIndex: tagLocalIndex, mergedIndex: mergedIndex, contents: contents)
        guard contentsChanged || mergedIndex != current.mergedIndex else { return }
        try write(entry)
        if let removedMergedIndex {
            try mergedIndexTable.remove(tag, mergedIndex: removedMergedIndex)
            mergedOperations.append(.remove(tag: tag, mergedIndices: [removedMergedIndex]))
        }
        if update.mergedIndex == .newAutomatic, let mergedIndex {
            try mergedIndexTable.add(tag, mergedIndex: mergedIndex, peerId: peerId, tagLocalIndex: tagLocalIndex)
            mergedOperations.append(.append(entry))
        } else if contentsChanged, mergedIndex != nil {
            mergedOperations.append(.updateContents(entry))
        }
    }
}
