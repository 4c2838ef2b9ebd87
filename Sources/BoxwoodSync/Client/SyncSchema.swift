import Boxwood
import BoxwoodStore

/// The schema of a sync database: the Postbox user version this build writes and the steps that bring an older
/// database to it, each in one transaction (all or nothing; see ``PostboxUpgrade``).
///
/// - Version 1: history with holes in the everywhere space only, messages tagged `pinned` only.
/// - Version 2: the media hole spaces (Postbox's `upgradedMessageHoles`): every stored message is tagged from its
///   content (``SyncMessageTags``), and each media space of every chat gets the chat's everywhere holes — where the
///   whole history is known, so is every media space (its messages were just tagged); where it is not, the shared
///   media view shows a hole that `searchHistory` fills.
/// - Version 3: the unread-mention space (``SyncMentions``). An older database never stored whether a message
///   mentions the account, so each chat's mention space becomes a hole over its whole history, with a count of zero
///   given as the server's (the mark that the count is to be made exact): the client's first start fills each chat's
///   space with `getUnreadMentions` (one request for a chat without unread mentions) and recounts it.
extension SyncClient {
    /// The user version of the databases this build writes.
    public static let userVersion: Int32 = 3

    /// The upgrade steps from older sync databases.
    public static var upgrades: [PostboxUpgrade] {
        [PostboxUpgrade(from: 1, to: 2, run: SyncSchemaUpgrades.addMediaSpaces),
         PostboxUpgrade(from: 2, to: 3, run: SyncSchemaUpgrades.addMentionSpace)]
    }

    /// Opens (or creates) a sync database at `path` as this build expects it: ``seedConfiguration``,
    /// ``userVersion`` and ``upgrades``. Use it, not `Postbox.open`, for any Postbox on a sync database (a second
    /// process, a tool), so that an older database is upgraded and a newer one refused
    /// (``PostboxError/newerUserVersion(found:supported:)``). A read-only open (`options.readOnly`, a tool) of an
    /// older database reads it as it is: upgrading would write.
    public static func openPostbox(path: String, options: ValueBoxOptions = ValueBoxOptions(),
                                   encryptionParameters: ValueBoxEncryptionParameters? = nil) async throws -> Postbox {
        try registerTypes()
        do {
            return try await Postbox.open(path: path, seedConfiguration: seedConfiguration, userVersion: userVersion, upgrades: upgrades,
                                          options: options, encryptionParameters: encryptionParameters)
        } catch BoxwoodError.readOnly(_) where options.readOnly {
            // An older version that only an upgrade (a write) would bring here: each older version in turn, as it is.
            for version in stride(from: userVersion - 1, through: 1, by: -1) {
                do {
                    return try await Postbox.open(path: path, seedConfiguration: seedConfiguration, userVersion: version,
                                                  upgrades: upgrades.filter { $0.to <= version }, options: options,
                                                  encryptionParameters: encryptionParameters)
                } catch BoxwoodError.readOnly(_) {
                    continue    // older still
                } catch PostboxError.newerUserVersion {
                    break       // not this one: the database is newer than `version` but needed writes at `userVersion`
                }
            }
            throw BoxwoodError.readOnly(path: path)
        }
    }
}

/// The upgrade steps' work.
enum SyncSchemaUpgrades {
    /// 1 → 2: tags every stored message of every listed chat from its content and gives each media space the chat's
    /// everywhere holes. Walks the chat-list index and each history a page at a time.
    static func addMediaSpaces(_ transaction: Transaction) throws {
        let cloud = SyncNamespaces.cloudMessages
        for index in try transaction.getChatListIndices(groupId: .root) {
            let peerId = index.messageIndex.id.peerId
            guard peerId.namespace != SyncNamespaces.secretChat else { continue }
            try SyncStorage.forEachHistoryPage(peerId, namespace: cloud, in: transaction) { messages in
                for message in messages {
                    let tags = SyncMessageTags.tags(of: SyncMessageContent.content(of: message),
                                                    pinned: message.tags.contains(SyncMessageTags.pinned))
                    if tags != message.tags { try transaction.updateMessage(message.id, SyncStorage.restored(message, tags: tags)) }
                }
            }
            let holes = try transaction.getHoles(peerId: peerId, namespace: cloud)
            for tag in SyncMessageTags.mediaSpaces {
                for range in holes { try transaction.addHole(peerId: peerId, namespace: cloud, space: .tag(tag), range: range) }
            }
        }
    }

    /// 2 → 3: gives every listed chat (secret chats have no mentions) a mention hole from its first id to its newest
    /// message and a server count of zero, so that the next start fills and recounts it (``SyncMentions/needsFill``).
    static func addMentionSpace(_ transaction: Transaction) throws {
        let cloud = SyncNamespaces.cloudMessages
        for index in try transaction.getChatListIndices(groupId: .root) {
            let peerId = index.messageIndex.id.peerId
            guard peerId.namespace != SyncNamespaces.secretChat,
                  let top = try transaction.getTopMessageIndex(peerId: peerId, namespace: cloud)?.id.id, top > 0 else { continue }
            try transaction.addHole(peerId: peerId, namespace: cloud, space: SyncMentions.space, range: 1...top)
            try transaction.replaceMessageTagSummary(peerId: peerId, tagMask: SyncMentions.tag, namespace: cloud, count: 0, maxId: 0)
        }
    }
}
