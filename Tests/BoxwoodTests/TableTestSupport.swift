import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// A database directory with one value box and every table of the peers branch on it, driven like Postbox
/// drives them: `transaction` runs `begin`, the body, every table's `beforeCommit()` and `commit`.
final class TableHarness {
    let path: String
    let useCaches: Bool
    private(set) var valueBox: ValueBox
    private(set) var metadata: MetadataTable
    private(set) var peers: PeerTable
    private(set) var chatStates: PeerChatStateTable
    private(set) var cachedData: CachedPeerDataTable
    private(set) var presences: PeerPresenceTable
    private(set) var notificationSettings: PeerNotificationSettingsTable
    private(set) var contacts: ContactTable
    private(set) var preferences: PreferencesTable
    private(set) var orderedLists: OrderedItemListTable
    private(set) var opLogMetadata: PeerOperationLogMetadataTable
    private(set) var mergedIndex: PeerMergedOperationLogIndexTable
    private(set) var opLog: PeerOperationLogTable
    private let ownsDirectory: Bool
    /// Whether `transaction` clears the caches when `begin` saw another value box's commits (Postbox does).
    var clearsCachesOnExternalCommits = true

    /// A new database in a fresh temporary directory.
    convenience init(_ tag: String, useCaches: Bool = true) throws {
        try self.init(path: NSTemporaryDirectory() + "bw-tables-\(tag)-\(UUID().uuidString)", useCaches: useCaches, ownsDirectory: true)
    }

    /// Another value box (with its own tables) on the database at `path`.
    init(path: String, useCaches: Bool = true, ownsDirectory: Bool = false) throws {
        try registerTestTypes()
        try registerTableTestTypes()
        self.path = path
        self.useCaches = useCaches
        self.ownsDirectory = ownsDirectory
        valueBox = try ValueBox(path: path)
        (metadata, peers, chatStates, cachedData, presences, notificationSettings, contacts, preferences, orderedLists,
         opLogMetadata, mergedIndex, opLog) = try Self.makeTables(valueBox, useCaches)
    }

    private static func makeTables(_ box: ValueBox, _ useCaches: Bool) throws -> (MetadataTable, PeerTable, PeerChatStateTable, CachedPeerDataTable,
                                                                         PeerPresenceTable, PeerNotificationSettingsTable, ContactTable,
                                                                         PreferencesTable, OrderedItemListTable, PeerOperationLogMetadataTable,
                                                                         PeerMergedOperationLogIndexTable, PeerOperationLogTable) {
        let opLogMetadata = PeerOperationLogMetadataTable(valueBox: box, useCaches: useCaches)
        let mergedIndex = PeerMergedOperationLogIndexTable(valueBox: box, useCaches: useCaches)
        return (MetadataTable(valueBox: box, useCaches: useCaches), PeerTable(valueBox: box, useCaches: useCaches),
                PeerChatStateTable(valueBox: box, useCaches: useCaches), CachedPeerDataTable(valueBox: box, useCaches: useCaches),
                PeerPresenceTable(valueBox: box, useCaches: useCaches), PeerNotificationSettingsTable(valueBox: box, useCaches: useCaches),
                ContactTable(valueBox: box, useCaches: useCaches), try PreferencesTable(valueBox: box, useCaches: useCaches),
                try OrderedItemListTable(valueBox: box, useCaches: useCaches), opLogMetadata, mergedIndex,
                PeerOperationLogTable(valueBox: box, metadataTable: opLogMetadata, mergedIndexTable: mergedIndex, useCaches: useCaches))
    }

    var tables: [Table] {
        [metadata, peers, chatStates, cachedData, presences, notificationSettings, contacts, preferences, orderedLists,
         opLogMetadata, mergedIndex, opLog]
    }

    /// Runs `body` in a transaction and commits it (the write-back tables flush first). If the value box saw
    /// another instance's commits at `begin`, every cache is cleared first, as Postbox's `afterBegin` does.
    @discardableResult
    func transaction<R>(_ body: () throws -> R) throws -> R {
        try valueBox.begin()
        do {
            if clearsCachesOnExternalCommits && valueBox.lastBeginSawExternalCommits { clearMemoryCaches() }
            let result = try body()
            for table in tables { try table.beforeCommit() }
            try valueBox.commit()
            return result
        } catch {
            valueBox.abort()
            clearMemoryCaches()
            throw error
        }
    }

    /// Runs `body` in a transaction, then aborts it and clears every cache and change accumulator.
    func abortedTransaction(_ body: () throws -> Void) throws {
        try valueBox.begin()
        try body()
        valueBox.abort()
        clearMemoryCaches()
        resetChanges()
    }

    func clearMemoryCaches() {
        for table in tables { table.clearMemoryCache() }
    }

    func resetChanges() {
        metadata.resetChanges()
        peers.resetChanges()
        chatStates.resetChanges()
        cachedData.resetChanges()
        presences.resetChanges()
        notificationSettings.resetChanges()
        contacts.resetChanges()
        preferences.resetChanges()
        orderedLists.resetChanges()
        opLogMetadata.resetChanges()
        mergedIndex.resetChanges()
        opLog.resetChanges()
    }

    /// Closes the value box and opens the database again with new tables (nothing cached survives).
    func reopen() throws {
        try valueBox.close()
        valueBox = try ValueBox(path: path)
        (metadata, peers, chatStates, cachedData, presences, notificationSettings, contacts, preferences, orderedLists,
         opLogMetadata, mergedIndex, opLog) = try Self.makeTables(valueBox, useCaches)
    }

    /// Closes the value box; removes the directory when this harness created it.
    func close() {
        try? valueBox.close()
        if ownsDirectory { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The raw value of `key` in `table`.
    func raw(_ table: ValueBoxTable, _ key: ValueBoxKey) throws -> [UInt8]? {
        try valueBox.get(table, key: key)?.makeArray()
    }
}

/// Runs `body` with a fresh harness and closes it (and removes the database) afterwards.
func withHarness(_ tag: String, useCaches: Bool = true, _ body: (TableHarness) throws -> Void) throws {
    let harness = try TableHarness(tag, useCaches: useCaches)
    defer { harness.close() }
    try body(harness)
}

// MARK: Test app types for the tables

/// An account state, as TelegramCore's AuthorizedAccountState.
struct TestAccountState: PostboxCoding, Equatable {
    static let postboxTypeName = "TestAccountState"

    var pts: Int32
    var qts: Int32
    var date: Int32
    var seq: Int32

    init(pts: Int32, qts: Int32, date: Int32, seq: Int32) {
        self.pts = pts
        self.qts = qts
        self.date = date
        self.seq = seq
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        pts = try decoder.decodeInt32(forKey: "p")
        qts = try decoder.decodeInt32(forKey: "q")
        date = try decoder.decodeInt32(forKey: "d")
        seq = try decoder.decodeInt32(forKey: "s")
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt32(pts, forKey: "p")
        encoder.encodeInt32(qts, forKey: "q")
        encoder.encodeInt32(date, forKey: "d")
        encoder.encodeInt32(seq, forKey: "s")
    }
}

/// A queued outbound operation's payload.
struct TestOperation: PostboxCoding, Equatable {
    static let postboxTypeName = "TestOperation"

    var payload: Int64
    var note: String

    init(payload: Int64, note: String = "") {
        self.payload = payload
        self.note = note
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        payload = try decoder.decodeInt64(forKey: "p")
        note = decoder.decodeStringForKey("n", orElse: "")
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(payload, forKey: "p")
        encoder.encodeString(note, forKey: "n")
    }
}

/// A Codable setting stored through ``CodableEntry`` (as the app stores most preferences and chat states).
struct TestChannelState: Codable, Equatable {
    var pts: Int32
    var invalidatedPts: Int32?
}

func registerTableTestTypes() throws {
    try declareEncodable(TestAccountState.self)
    try declareEncodable(TestOperation.self)
}

func peer(_ namespace: Int32, _ id: Int64) -> PeerId {
    PeerId(namespace: PeerId.Namespace(namespace), id: PeerId.Id(id))
}
