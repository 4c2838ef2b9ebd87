import BoxwoodStore
/// Table 7: the messages (Postbox's `MessageHistoryTable`). Binary keys
/// `peerId(8) ‖ namespace(4) ‖ timestamp(4) ‖ id(4)` (big-endian, 20 bytes) → the ``IntermediateMessage`` fields
/// (PostboxEncoder, see `docs/postbox-tables-history.md`).
///
/// Like Postbox's, this table also runs the history: adding, deleting and updating a message keeps every other
/// history table consistent — the id index (4), tags (12), tag summaries (44), global ids (3), globally unique ids (32), the text
/// index (41), the unsent messages (11), the read states (14, unread counters), the holes (56, upper history
/// blocks), the shared media (6) and the counters (10) — and records one `HistoryTableOperation` per change in ``operationsByPeerId``. Write-through.
///
/// Timestamps and ids are expected to be non-negative: keys order them as unsigned numbers, so negative ones are
/// stored and found by id but sort above the positive ones in ordered reads.
final class MessageHistoryTable: Table {
    static let tableId: Int32 = 7

    let configuration: MessageHistoryConfiguration
    let metadataTable: MessageHistoryMetadataTable
    let indexTable: MessageHistoryIndexTable
    let tagsTable: MessageHistoryTagsTable
    let tagsSummaryTable: MessageHistoryTagsSummaryTable
    let globalIdsTable: GlobalMessageIdsTable
    let globallyUniqueIdTable: MessageGloballyUniqueIdTable
    let holeTable: MessageHistoryHoleIndexTable
    let readStateTable: MessageHistoryReadStateTable
    let textIndexTable: MessageHistoryTextIndexTable?
    let unsentTable: MessageHistoryUnsentTable
    let mediaTable: MessageMediaTable

    /// History changes of the current transaction, per peer, in order.
    private(set) var operationsByPeerId: [PeerId: [HistoryTableOperation]] = [:]
    /// Media changed in place this transaction (``updateMedia(_:to:)``), with their new values.
    var updatedMedia: [MediaId: any Media] = [:]

    private let encoder = PostboxEncoder()

    init(valueBox: ValueBox, configuration: MessageHistoryConfiguration, metadataTable: MessageHistoryMetadataTable,
         indexTable: MessageHistoryIndexTable, tagsTable: MessageHistoryTagsTable,
         tagsSummaryTable: MessageHistoryTagsSummaryTable, globalIdsTable: GlobalMessageIdsTable,
         globallyUniqueIdTable: MessageGloballyUniqueIdTable, holeTable: MessageHistoryHoleIndexTable,
         readStateTable: MessageHistoryReadStateTable, textIndexTable: MessageHistoryTextIndexTable?,
         unsentTable: MessageHistoryUnsentTable, mediaTable: MessageMediaTable, useCaches: Bool = true) {
        self.configuration = configuration
        self.metadataTable = metadataTable
        self.indexTable = indexTable
        self.tagsTable = tagsTable
        self.tagsSummaryTable = tagsSummaryTable
        self.globalIdsTable = globalIdsTable
        self.globallyUniqueIdTable = globallyUniqueIdTable
        self.holeTable = holeTable
        self.readStateTable = readStateTable
        self.textIndexTable = textIndexTable
        self.unsentTable = unsentTable
        self.mediaTable = mediaTable
        super.init(valueBox: valueBox, table: ValueBoxTable(id: Self.tableId, keyType: .binary), useCaches: useCaches)
    }

    func resetChanges() {
        operationsByPeerId.removeAll()
        updatedMedia.removeAll()
    }

    private func append(_ peerId: PeerId, _ operation: HistoryTableOperation) {
        operationsByPeerId[peerId, default: []].append(operation)
    }

    // MARK: Keys

    func key(_ index: MessageIndex) -> ValueBoxKey {
        var key = ValueBoxKey(length: 20)
        key.setInt64(0, value: index.id.peerId.toInt64())
        key.setInt32(8, value: index.id.namespace.rawValue)
        key.setInt32(12, value: index.timestamp)
        key.setInt32(16, value: index.id.id)
        return key
    }

    private func prefix(_ peerId: PeerId, _ namespace: MessageId.Namespace) -> ValueBoxKey {
        var key = ValueBoxKey(length: 12)
        key.setInt64(0, value: peerId.toInt64())
        key.setInt32(8, value: namespace.rawValue)
        return key
    }

    private func decode(_ index: MessageIndex, _ buffer: MemoryBuffer) throws -> IntermediateMessage {
        do {
            return try IntermediateMessage(index: index, decoder: PostboxDecoder(buffer: buffer))
        } catch {
            throw HistoryTableError.corrupt(table: Self.tableId, reason: "message \(index): \(error)")
        }
    }

    // MARK: Storage of one message (every index)

    private func usesGlobalIds(_ id: MessageId) -> Bool {
        configuration.globalMessageIdsNamespaces.contains(GlobalMessageIdsNamespace(peerIdNamespace: id.peerId.namespace, messageIdNamespace: id.namespace))
    }

    /// Stores `message` and every index entry it has; its media with ids are shared through the media table first
    /// (`shareMedia`). Returns the message as stored.
    /// `indexesText: false` leaves the text index alone (an update that keeps the id, text and tags: its entry is
    /// already right).
    @discardableResult
    private func store(_ message: IntermediateMessage, indexesText: Bool = true) throws -> IntermediateMessage {
        let message = try shareMedia(of: message)
        try rewriteStoredValue(message)
        try indexTable.set(message)
        try tagsTable.add(tags: message.tags, index: message.index)
        if usesGlobalIds(message.id) { try globalIdsTable.set(globalId: message.id.id, id: message.id) }
        if let unique = message.globallyUniqueId { try globallyUniqueIdTable.set(globallyUniqueId: unique, id: message.id) }
        if indexesText, configuration.indexMessageText, let textIndexTable, !message.text.isEmpty {
            try textIndexTable.add(id: message.id, text: message.text, tags: message.tags)
        }
        if MessageHistoryUnsentTable.isIndexed(message.flags) { try unsentTable.add(message.index) }
        return message
    }

    /// Writes `message`'s value in this table (its index entries are the caller's business).
    func rewriteStoredValue(_ message: IntermediateMessage) throws {
        encoder.reset()
        message.encode(encoder)
        try valueBox.set(table, key: key(message.index), encoder: encoder)
    }

    /// Removes `message` and every index entry it has, and its claims on shared media; `freedMedia` gets each media
    /// item no stored message carries any more; `indexesText: false` leaves its text index entry (see ``store(_:indexesText:)``).
    private func unstore(_ message: IntermediateMessage, indexesText: Bool = true, freedMedia: ((any Media) -> Void)? = nil) throws {
        try releaseMedia(of: message, freed: freedMedia)
        try valueBox.remove(table, key: key(message.index))
        try indexTable.remove(message.id)
        try tagsTable.remove(tags: message.tags, index: message.index)
        if usesGlobalIds(message.id) { try globalIdsTable.remove(globalId: message.id.id, id: message.id) }
        if let unique = message.globallyUniqueId { try globallyUniqueIdTable.remove(globallyUniqueId: unique, id: message.id) }
        if indexesText, configuration.indexMessageText, let textIndexTable, !message.text.isEmpty {
            try textIndexTable.remove(id: message.id)
        }
        if MessageHistoryUnsentTable.isIndexed(message.flags) { try unsentTable.remove(message.index) }
    }

    /// The id the next partial message of (peer, namespace) gets: the stored counter, but above every stored
    /// non-negative id, so that it never collides with a message added with an explicit id.
    private func assignId(peerId: PeerId, namespace: MessageId.Namespace) throws -> MessageId {
        let stored = try metadataTable.nextMessageId(peerId: peerId, namespace: namespace)
        var next = stored
        if let top = try indexTable.topNonNegativeId(peerId: peerId, namespace: namespace), top >= next {
            guard top < .max else { throw HistoryTableError.idSpaceExhausted(peerId: peerId, namespace: namespace) }
            next = top + 1
        }
        guard next < .max else { throw HistoryTableError.idSpaceExhausted(peerId: peerId, namespace: namespace) }
        try metadataTable.setNextMessageId(peerId: peerId, namespace: namespace, next + 1)
        return MessageId(peerId: peerId, namespace: namespace, id: next)
    }

    private func updateReadState(_ peerId: PeerId, _ state: CombinedPeerReadState?) {
        if let state { append(peerId, .updateReadState(peerId, state)) }
    }

    // MARK: Adding

    /// Stores `messages`: partial ids get the next id of their peer and namespace, every message a new stable id.
    /// A message whose id is already stored (or repeated in the batch) is skipped, the stored one unchanged, and
    /// its id listed in the result's `existing`. Unread counters count the incoming ones; `.upperHistoryBlock`
    /// removes from every hole space of each (peer, namespace) the ids from the lowest added one up. Returns the
    /// ids added, the ids skipped, and the ids of the added messages that have a globally unique id.
    @discardableResult
    func addMessages(_ messages: [StoreMessage], location: AddMessagesLocation) throws -> AddMessagesResult {
        var result = AddMessagesResult()
        var incoming: [PeerId: [MessageIndex]] = [:]
        var lowestIds: [MessageHistoryHoleOperationKey: Int32] = [:]
        let firstStableId = try metadataTable.nextStableMessageId()
        var nextStableId = firstStableId
        var initialized = Set<PeerId>()
        for message in messages {
            let peerId = message.id.peerId
            if initialized.insert(peerId).inserted { try holeTable.ensureInitialized(peerId) }
            let id: MessageId
            switch message.id {
            case let .id(messageId):
                if try indexTable.exists(messageId) {
                    result.existing.append(messageId)
                    continue
                }
                id = messageId
            case let .partial(peerId, namespace):
                id = try assignId(peerId: peerId, namespace: namespace)
            }
            let stored = try store(IntermediateMessage(stableId: nextStableId, stableVersion: 0, id: id, message: message))
            nextStableId = nextStableId == .max ? 1 : nextStableId + 1
            append(peerId, .insertMessage(stored))
            try countSummaryTags(stored.tags, id: id, isNewlyAdded: true)
            if stored.countsAsIncoming { incoming[peerId, default: []].append(stored.index) }
            result.added.append(id)
            if let unique = message.globallyUniqueId { result.idsByGloballyUniqueId[unique] = id }
            let holeKey = MessageHistoryHoleOperationKey(peerId: peerId, namespace: id.namespace, space: .everywhere)
            lowestIds[holeKey] = min(lowestIds[holeKey] ?? .max, id.id)
        }
        if nextStableId != firstStableId { try metadataTable.setNextStableMessageId(nextStableId) }
        for (peerId, indices) in incoming.sorted(by: { $0.key < $1.key }) {
            updateReadState(peerId, try readStateTable.addIncomingMessages(peerId, indices: indices))
        }
        if location == .upperHistoryBlock {
            for (key, lowest) in lowestIds.sorted(by: { ($0.key.peerId, $0.key.namespace) < ($1.key.peerId, $1.key.namespace) }) {
                // `lowest...Int32.max` is never empty (a message id may be Int32.max: the range must not end
                // below it); the hole table clips it to the ids holes cover (1…Int32.max−1), so an id of
                // Int32.max removes nothing.
                try holeTable.removeHoleEverySpace(peerId: key.peerId, namespace: key.namespace, range: lowest...Int32.max)
            }
        }
        return result
    }

    // MARK: Deleting

    /// Removes the messages (ids not stored are ignored) and every index entry they have; unread counters
    /// uncount the unread incoming ones. `forEachMedia` gets every media item that goes with them: each embedded
    /// one, and each shared one whose last carrier this was (so that the app can delete its files).
    func deleteMessages(_ ids: [MessageId], forEachMedia: ((any Media) -> Void)? = nil) throws {
        var removed: [PeerId: [(MessageIndex, MessageTags)]] = [:]
        var incoming: [PeerId: [MessageIndex]] = [:]
        var seen = Set<MessageId>()
        for id in ids where seen.insert(id).inserted {
            guard let message = try getMessage(id) else { continue }
            try unstore(message, freedMedia: forEachMedia)
            try uncountSummaryTags(message.tags, id: id)
            removed[id.peerId, default: []].append((message.index, message.tags))
            if message.countsAsIncoming { incoming[id.peerId, default: []].append(message.index) }
        }
        for (peerId, entries) in removed.sorted(by: { $0.key < $1.key }) {
            append(peerId, .remove(entries))
        }
        for (peerId, indices) in incoming.sorted(by: { $0.key < $1.key }) {
            updateReadState(peerId, try readStateTable.deleteIncomingMessages(peerId, indices: indices))
        }
    }

    // MARK: Updating

    /// Replaces message `id` with `message`, which may have another id (a partial id in another peer or namespace
    /// gets a new one; the same peer and namespace keep the id), timestamp, tags, text or flags. The stable id is
    /// kept and the version bumped. A different message already stored at the new id is deleted first. Recorded as
    /// a removal and an insertion, as in Postbox. Tag summaries: within the same chat and namespace only the tag bits
    /// removed are uncounted and those added counted (always, whatever the summary's `maxId`); a message moved to
    /// another chat or namespace is uncounted there and counted as newly added at its new id.
    /// `stored`, when given, is message `id` as stored now (read by the caller in this transaction, unchanged since).
    func updateMessage(_ id: MessageId, _ message: StoreMessage, stored: IntermediateMessage? = nil) throws {
        guard let old = try stored ?? getMessage(id) else { throw HistoryTableError.messageNotFound(id) }
        let newId: MessageId
        switch message.id {
        case let .id(messageId):
            newId = messageId
        case let .partial(peerId, namespace):
            if peerId == id.peerId && namespace == id.namespace {
                newId = id
            } else {
                try holeTable.ensureInitialized(peerId)
                newId = try assignId(peerId: peerId, namespace: namespace)
            }
        }
        if newId != id, try indexTable.exists(newId) {
            try deleteMessages([newId])
        }
        if newId.peerId != id.peerId { try holeTable.ensureInitialized(newId.peerId) }
        let fresh = IntermediateMessage(stableId: old.stableId, stableVersion: old.stableVersion &+ 1, id: newId, message: message)
        // The text index entry (keyed by id, holding the text and the tags) is replaced only when the id or the
        // text changes; a change of tags alone (a pin, a mention read) edits its tags in place, and an update of
        // reactions, counters or a flag leaves it as it is.
        let reindexesText = newId != id || fresh.text != old.text
        let retagsText = !reindexesText && fresh.tags != old.tags
        // An update that keeps the index, the tags, the globally unique id and the unsent state of a message
        // without shareable media (before and after) leaves every index entry but the id index's flags as it is:
        // only the value, the id index and (when the text changes) the text index are written. Same tables and
        // change record as removing and storing it (none of those steps records anything else, and the read-state
        // steps read no message).
        let inPlace = newId == id && fresh.timestamp == old.timestamp && fresh.tags == old.tags
            && fresh.globallyUniqueId == old.globallyUniqueId
            && !MessageHistoryUnsentTable.isIndexed(old.flags) && !MessageHistoryUnsentTable.isIndexed(fresh.flags)
            && !old.media.contains { $0.id != nil } && !fresh.media.contains { $0.id != nil }
        if !inPlace { try unstore(old, indexesText: reindexesText) }
        append(id.peerId, .remove([(old.index, old.tags)]))
        if old.countsAsIncoming {
            updateReadState(id.peerId, try readStateTable.deleteIncomingMessages(id.peerId, indices: [old.index]))
        }
        let updated: IntermediateMessage
        if inPlace {
            try rewriteStoredValue(fresh)
            try indexTable.set(fresh)
            if reindexesText, configuration.indexMessageText, let textIndexTable {
                if !old.text.isEmpty { try textIndexTable.remove(id: id) }
                if !fresh.text.isEmpty { try textIndexTable.add(id: id, text: fresh.text, tags: fresh.tags) }
            }
            updated = fresh
        } else {
            updated = try store(fresh, indexesText: reindexesText)
        }
        if retagsText, configuration.indexMessageText, let textIndexTable, !updated.text.isEmpty,
           try !textIndexTable.updateTags(id: newId, tags: updated.tags) {
            try textIndexTable.add(id: newId, text: updated.text, tags: updated.tags)
        }
        append(newId.peerId, .insertMessage(updated))
        if newId.peerId == id.peerId && newId.namespace == id.namespace {
            try uncountSummaryTags(old.tags.subtracting(updated.tags), id: id)
            try countSummaryTags(updated.tags.subtracting(old.tags), id: newId, isNewlyAdded: false)
        } else {
            try uncountSummaryTags(old.tags, id: id)
            try countSummaryTags(updated.tags, id: newId, isNewlyAdded: true)
        }
        if updated.countsAsIncoming {
            updateReadState(newId.peerId, try readStateTable.addIncomingMessages(newId.peerId, indices: [updated.index]))
        }
    }

    /// Moves message `id` to `timestamp` (Postbox's `updateMessageTimestamp`), recorded as `.updateTimestamp`.
    func updateMessageTimestamp(_ id: MessageId, timestamp: Int32) throws {
        guard var message = try getMessage(id) else { throw HistoryTableError.messageNotFound(id) }
        let oldIndex = message.index
        guard oldIndex.timestamp != timestamp else { return }
        try valueBox.remove(table, key: key(oldIndex))
        try tagsTable.remove(tags: message.tags, index: oldIndex)
        message.timestamp = timestamp
        try rewriteStoredValue(message)
        try tagsTable.add(tags: message.tags, index: message.index)
        try indexTable.set(message)
        try moveMediaReferences(of: message, from: oldIndex)
        if MessageHistoryUnsentTable.isIndexed(message.flags) {
            try unsentTable.remove(oldIndex)
            try unsentTable.add(message.index)
        }
        append(id.peerId, .updateTimestamp(oldIndex, timestamp))
        if message.countsAsIncoming {
            updateReadState(id.peerId, try readStateTable.deleteIncomingMessages(id.peerId, indices: [oldIndex]))
            updateReadState(id.peerId, try readStateTable.addIncomingMessages(id.peerId, indices: [message.index]))
        }
    }

    // MARK: Tag summaries

    /// Counts `tags`' bits that have a summary (see ``MessageHistoryTagsSummaryTable/addMessage(_:id:isNewlyAdded:)``).
    private func countSummaryTags(_ tags: MessageTags, id: MessageId, isNewlyAdded: Bool) throws {
        for tag in tags.intersection(tagsSummaryTable.summaryTags).singleTags {
            try tagsSummaryTable.addMessage(tag, id: id, isNewlyAdded: isNewlyAdded)
        }
    }

    /// Uncounts `tags`' bits that have a summary (see ``MessageHistoryTagsSummaryTable/removeMessage(_:id:)``).
    private func uncountSummaryTags(_ tags: MessageTags, id: MessageId) throws {
        for tag in tags.intersection(tagsSummaryTable.summaryTags).singleTags {
            try tagsSummaryTable.removeMessage(tag, id: id)
        }
    }

    // MARK: The unsent index

    /// Fills the unsent-message index (table 11) from the stored messages once, for a database written before
    /// the index existed; a database that has it (every new one) is left alone. Not recorded as a change.
    func buildUnsentIndexIfNeeded() throws {
        guard try !metadataTable.isUnsentIndexBuilt() else { return }
        var unsent: [MessageIndex] = []
        var failure: Error?
        try valueBox.scan(table, values: { key, value in
            guard key.length == 20 else { return true }
            let index = MessageIndex(id: MessageId(peerId: PeerId(key.getInt64(0)), namespace: MessageId.Namespace(key.getInt32(8)), id: key.getInt32(16)),
                                     timestamp: key.getInt32(12))
            do {
                if MessageHistoryUnsentTable.isIndexed(try decode(index, value).flags) { unsent.append(index) }
            } catch {
                failure = error
                return false
            }
            return true
        })
        if let failure { throw failure }
        for index in unsent { try unsentTable.add(index, record: false) }
        try metadataTable.setUnsentIndexBuilt()
    }

    /// Indexes the text of every stored message again when the text index was written in an older layout of the
    /// engine's full-text index (``ValueBox/fullTextNeedsRebuild(_:)``): it is cleared and rebuilt in this transaction,
    /// walking the history a page of keys at a time. Runs at each open of a writable database; costs one read when
    /// the index is current.
    func rebuildTextIndexIfNeeded() throws {
        guard configuration.indexMessageText, let textIndexTable, try valueBox.fullTextNeedsRebuild(textIndexTable.table) else { return }
        try valueBox.fullTextReset(textIndexTable.table)
        var start = ValueBoxKey(length: 0)
        let end = ValueBoxKey([UInt8](repeating: 0xFF, count: 21))
        while true {
            var page: [(MessageIndex, String, MessageTags)] = []
            var last: ValueBoxKey?
            var failure: Error?
            try valueBox.range(table, start: start, end: end, values: { key, value in
                last = key
                guard key.length == 20 else { return true }
                let index = MessageIndex(id: MessageId(peerId: PeerId(key.getInt64(0)), namespace: MessageId.Namespace(key.getInt32(8)), id: key.getInt32(16)),
                                         timestamp: key.getInt32(12))
                do {
                    let fields = try self.decode(index, value)
                    if !fields.text.isEmpty { page.append((index, fields.text, fields.tags)) }
                } catch {
                    failure = error
                    return false
                }
                return true
            }, limit: 1_000)
            if let failure { throw failure }
            for (index, text, tags) in page { try textIndexTable.add(id: index.id, text: text, tags: tags) }
            guard let last else { return }
            start = last
        }
    }

    // MARK: Reads

    /// The stored index of message `id`.
    func messageIndex(of id: MessageId) throws -> MessageIndex? {
        guard let entry = try indexTable.get(id) else { return nil }
        return MessageIndex(id: id, timestamp: entry.timestamp)
    }

    func getMessage(_ id: MessageId) throws -> IntermediateMessage? {
        guard let index = try messageIndex(of: id) else { return nil }
        guard let message = try message(at: index) else {
            throw HistoryTableError.corrupt(table: Self.tableId, reason: "message \(index) is in the index table only")
        }
        return message
    }

    /// The message stored at `index`.
    func message(at index: MessageIndex) throws -> IntermediateMessage? {
        guard let buffer = try valueBox.get(table, key: key(index)) else { return nil }
        return try decode(index, buffer)
    }

    /// Up to `limit` (0: all) indices of `peerId`'s messages in `namespaces` (nil: every namespace) before
    /// (`.earlier`, descending) or after (`.later`, ascending) `anchor` (nil: from the newest or the oldest).
    func indices(peerId: PeerId, namespaces: Set<MessageId.Namespace>? = nil, anchor: MessageIndex?,
                 direction: HistoryReadDirection, limit: Int) throws -> [MessageIndex] {
        var lists: [[MessageIndex]] = []
        for namespace in try namespacesToRead(peerId, namespaces) {
            let (start, end) = HistoryKeyRanges.bounds(prefix: prefix(peerId, namespace), namespace: namespace, anchor: anchor, direction: direction)
            var list: [MessageIndex] = []
            try valueBox.range(table, start: start, end: end, keys: { key in
                if let index = HistoryKeyRanges.index(key: key, prefixLength: 12, peerId: peerId, namespace: namespace) { list.append(index) }
                return true
            }, limit: limit)
            lists.append(list)
        }
        return HistoryKeyRanges.merge(lists, direction: direction, limit: limit)
    }

    /// Like ``indices(peerId:namespaces:anchor:direction:limit:)``, with the messages.
    func messages(peerId: PeerId, namespaces: Set<MessageId.Namespace>? = nil, anchor: MessageIndex?,
                  direction: HistoryReadDirection, limit: Int) throws -> [IntermediateMessage] {
        var all: [IntermediateMessage] = []
        var failure: Error?
        for namespace in try namespacesToRead(peerId, namespaces) {
            let (start, end) = HistoryKeyRanges.bounds(prefix: prefix(peerId, namespace), namespace: namespace, anchor: anchor, direction: direction)
            try valueBox.range(table, start: start, end: end, values: { key, value in
                guard let index = HistoryKeyRanges.index(key: key, prefixLength: 12, peerId: peerId, namespace: namespace) else { return true }
                do {
                    all.append(try self.decode(index, value))
                    return true
                } catch {
                    failure = error
                    return false
                }
            }, limit: limit)
            if let failure { throw failure }
        }
        if direction == .earlier { all.sort { $0.index > $1.index } } else { all.sort { $0.index < $1.index } }
        if limit > 0 && all.count > limit { all.removeLast(all.count - limit) }
        return all
    }

    /// Up to `limit` indices of `peerId`'s messages carrying any bit of `tag`, like
    /// ``indices(peerId:namespaces:anchor:direction:limit:)``.
    func tagIndices(peerId: PeerId, tag: MessageTags, namespaces: Set<MessageId.Namespace>? = nil, anchor: MessageIndex?,
                    direction: HistoryReadDirection, limit: Int) throws -> [MessageIndex] {
        try tagsTable.indices(peerId: peerId, tag: tag, namespaces: Set(try namespacesToRead(peerId, namespaces)),
                              anchor: anchor, direction: direction, limit: limit)
    }

    private func namespacesToRead(_ peerId: PeerId, _ namespaces: Set<MessageId.Namespace>?) throws -> [MessageId.Namespace] {
        let existing = try indexTable.existingNamespaces(peerId)
        return (namespaces.map { existing.intersection($0) } ?? existing).sorted()
    }

    /// The newest index of (peer, namespace).
    func topIndex(peerId: PeerId, namespace: MessageId.Namespace) throws -> MessageIndex? {
        try indices(peerId: peerId, namespaces: [namespace], anchor: nil, direction: .earlier, limit: 1).first
    }

    /// The newest index of `peerId` over `namespaces` (nil: all).
    func topIndex(peerId: PeerId, namespaces: Set<MessageId.Namespace>?) throws -> MessageIndex? {
        try indices(peerId: peerId, namespaces: namespaces, anchor: nil, direction: .earlier, limit: 1).first
    }

    /// The message with account-wide id `globalId` (see `GlobalMessageIdsTable`).
    func messageId(globalId: Int32) throws -> MessageId? {
        try globalIdsTable.get(globalId: globalId)
    }

    /// The message of `peerId` stored with `globallyUniqueId`.
    func messageId(peerId: PeerId, globallyUniqueId: Int64) throws -> MessageId? {
        try globallyUniqueIdTable.get(peerId: peerId, globallyUniqueId: globallyUniqueId)
    }

    /// The number of stored incoming (or counted-as-incoming) messages of (peer, namespace) with ids in `range`.
    func incomingCount(peerId: PeerId, namespace: MessageId.Namespace, ids range: ClosedRange<Int32>) throws -> Int32 {
        let entries = try indexTable.ids(peerId: peerId, namespace: namespace, in: range)
        return Int32(clamping: entries.filter { $0.1.incoming || $0.1.countedAsIncoming }.count)
    }

    /// The messages whose text matches `query` (see ``MessageHistoryTextIndexTable/search(_:peerId:tags:)``), newest
    /// first by index. Ids the text index returns that are no longer stored are left out.
    func search(_ query: String, peerId: PeerId?, tags: MessageTags?) throws -> [MessageIndex] {
        guard let textIndexTable else { return [] }
        var result: [MessageIndex] = []
        for id in try textIndexTable.search(query, peerId: peerId, tags: tags) {
            if let index = try messageIndex(of: id) { result.append(index) }
        }
        return result.sorted(by: >)
    }

    // MARK: Read states

    /// Marks incoming messages read up to `messageId` (id-based), or up to its index (index-based namespaces, when
    /// the message is stored).
    func applyIncomingMaxReadId(_ messageId: MessageId) throws {
        let peerId = messageId.peerId
        let namespace = messageId.namespace
        if case .indexBased? = try readStateTable.get(peerId)?.states[namespace] {
            guard let index = try messageIndex(of: messageId) else { return }
            try applyIncomingMaxReadIndex(index)
            return
        }
        let state = try readStateTable.applyIncomingMaxReadId(messageId, countIncoming: { range in
            try self.incomingCount(peerId: peerId, namespace: namespace, ids: range)
        }, rangeHasHoles: { range in
            !(try self.holeTable.holes(peerId: peerId, namespace: namespace, space: .everywhere, overlapping: range)).isEmpty
        })
        updateReadState(peerId, state)
    }

    /// Marks incoming messages of an index-based namespace read up to `index`.
    func applyIncomingMaxReadIndex(_ index: MessageIndex) throws {
        let peerId = index.id.peerId
        let namespace = index.id.namespace
        let state = try readStateTable.applyIncomingMaxReadIndex(index, countIncoming: { lower, upper in
            var count: Int32 = 0
            for message in try self.messages(peerId: peerId, namespaces: [namespace], anchor: lower, direction: .later, limit: 0) {
                if message.index > upper { break }
                if message.countsAsIncoming { count += 1 }
            }
            return count
        })
        updateReadState(peerId, state)
    }

    /// Marks outgoing messages read by the other side up to `messageId`.
    func applyOutgoingMaxReadId(_ messageId: MessageId) throws {
        updateReadState(messageId.peerId, try readStateTable.applyOutgoingMaxReadId(messageId))
    }

    /// Sets (on `namespace`) or clears (on every namespace) the manual unread mark.
    func markUnread(peerId: PeerId, namespace: MessageId.Namespace, value: Bool) throws {
        updateReadState(peerId, try readStateTable.markUnread(peerId, namespace: namespace, value: value))
    }

    /// Replaces read states with the server's.
    func resetReadStates(peerId: PeerId, states: [MessageId.Namespace: PeerReadState]) throws {
        updateReadState(peerId, try readStateTable.resetStates(peerId, states: states))
    }
}
