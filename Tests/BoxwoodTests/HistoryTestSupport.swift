import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// A value box in a temporary directory with the history tables on it, and transactions run the way Postbox ends
/// them (replay, change record, reset, flush, commit).
final class HistoryFixture {
    let path: String
    let configuration: MessageHistoryConfiguration
    let initialChatListHoles: (topLevel: ChatListHole?, groups: ChatListHole?)
    private(set) var box: ValueBox
    private(set) var tables: MessageHistoryTables

    /// The change record of the last committed transaction.
    struct Changes {
        var operationsByPeerId: [PeerId: [HistoryTableOperation]] = [:]
        var holeOperations: [MessageHistoryHoleOperationKey: [MessageHistoryHoleOperation]] = [:]
        var chatListOperations: [PeerGroupId: [ChatListOperation]] = [:]
        var initialReadStates: [PeerId: CombinedPeerReadState?] = [:]
        var totalUnreadStates: [PeerGroupId: ChatListTotalUnreadState] = [:]
        var updatedInclusions: [PeerId: PeerChatListInclusion] = [:]
    }

    private(set) var lastChanges = Changes()

    init(_ name: String, configuration: MessageHistoryConfiguration = MessageHistoryConfiguration(),
         initialChatListHoles: (topLevel: ChatListHole?, groups: ChatListHole?) = (nil, nil), durability: Durability = .off) throws {
        path = NSTemporaryDirectory() + "bw-hist-\(name)-\(UUID().uuidString)"
        self.configuration = configuration
        self.initialChatListHoles = initialChatListHoles
        box = try ValueBox(path: path, options: ValueBoxOptions(durability: durability))
        tables = try MessageHistoryTables(valueBox: box, configuration: configuration, initialChatListHoles: initialChatListHoles)
    }

    deinit {
        try? box.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Runs `body` in a committed transaction.
    @discardableResult
    func transaction<T>(_ body: (MessageHistoryTables) throws -> T) throws -> T {
        try box.begin()
        do {
            let result = try body(tables)
            try tables.prepareCommit()
            lastChanges = Changes(operationsByPeerId: tables.history.operationsByPeerId,
                                  holeOperations: tables.holes.operations,
                                  chatListOperations: tables.chatList.operations,
                                  initialReadStates: tables.readStates.initialStates,
                                  totalUnreadStates: tables.chatListIndex.updatedTotalUnreadStates,
                                  updatedInclusions: tables.chatListIndex.updatedInclusions)
            tables.resetChanges()
            try tables.beforeCommit()
            try box.commit()
            return result
        } catch {
            box.abort()
            tables.clearMemoryCache()
            throw error
        }
    }

    /// Runs `body` (and the end-of-transaction steps up to the flush) in a transaction that is then aborted.
    func abortedTransaction(_ body: (MessageHistoryTables) throws -> Void) throws {
        try box.begin()
        defer {
            box.abort()
            tables.clearMemoryCache()
        }
        try body(tables)
        try tables.prepareCommit()
        tables.resetChanges()
        try tables.beforeCommit()
    }

    /// Closes and reopens the value box with new table instances.
    func reopen() throws {
        try box.close()
        box = try ValueBox(path: path, options: ValueBoxOptions(durability: .off))
        tables = try MessageHistoryTables(valueBox: box, configuration: configuration, initialChatListHoles: initialChatListHoles)
    }

    /// Runs `body` in a read-only look (a transaction that changes nothing).
    func read<T>(_ body: (MessageHistoryTables) throws -> T) throws -> T {
        try box.begin()
        defer { box.abort() }
        return try body(tables)
    }
}

func peer(_ id: Int64, namespace: Int32 = 0) -> PeerId {
    PeerId(namespace: PeerId.Namespace(namespace), id: PeerId.Id(id))
}

func storeMessage(_ id: MessageId, timestamp: Int32, flags: MessageFlags = [], tags: MessageTags = [], text: String = "",
                  globallyUniqueId: Int64? = nil) -> StoreMessage {
    StoreMessage(id: .id(id), globallyUniqueId: globallyUniqueId, timestamp: timestamp, flags: flags, tags: tags,
                 authorId: nil, text: text)
}
