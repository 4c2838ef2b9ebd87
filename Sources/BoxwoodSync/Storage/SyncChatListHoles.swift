import Boxwood
import BoxwoodStore

/// The root chat list's hole: the part of the dialog list below the pages fetched so far (Postbox's `ChatListHole`).
///
/// A hole sits at the position of the last dialog fetched above it (``ApiDialogsOffset``: its top message's date, id
/// and peer, as a `MessageIndex` of the cloud namespace); the dialogs strictly below it are not known here. A
/// chat-list view that shows the hole makes the client fetch the next page with that offset
/// (``ChatListHoleFiller``). What is known about chats listed below the hole (from an earlier sync) is not verified:
/// the page that reaches them resets them.
///
/// Which chats are known is kept by generations: each rebuild from the dialog list starts one
/// (``SyncDialogListGeneration``, stored by its closing batch; above every generation a rebuild started before, so the
/// marks of a rebuild that never closed are not taken for the next one's), and every chat reset from its dialog — by the rebuild's
/// pages, a hole fill, or the refresh of a discovered chat — is marked with the current one
/// (``SyncChatState/dialogGeneration``). While the list has a hole, a chat that gets messages and is not marked with
/// the current generation is discovered: its dialog is fetched.
enum SyncChatListHoles {
    /// The hole's index for a dialog-list offset.
    static func index(_ offset: ApiDialogsOffset) -> MessageIndex {
        MessageIndex(id: MessageId(peerId: offset.peerId, namespace: SyncNamespaces.cloudMessages, id: offset.id), timestamp: offset.date)
    }

    /// The dialog-list offset of a hole.
    static func offset(_ hole: ChatListHole) -> ApiDialogsOffset {
        ApiDialogsOffset(date: hole.index.timestamp, id: hole.index.id.id, peerId: hole.index.id.peerId)
    }

    /// The root list's topmost hole, nil when the whole list is known.
    static func topHole(in transaction: Transaction) throws -> ChatListHole? {
        try transaction.getChatListHoles(groupId: .root).first
    }

    /// Removes every hole of the root list and, with an offset, makes everything below it one hole.
    static func set(below offset: ApiDialogsOffset?, in transaction: Transaction) throws {
        for hole in try transaction.getChatListHoles(groupId: .root) {
            try transaction.replaceChatListHole(groupId: .root, index: hole.index, hole: nil)
        }
        if let offset { try transaction.addChatListHole(groupId: .root, ChatListHole(index: index(offset))) }
    }

    /// Moves the hole at `offset` down to `next` (nil: removes it).
    static func replace(at offset: ApiDialogsOffset, next: ApiDialogsOffset?, in transaction: Transaction) throws {
        try transaction.replaceChatListHole(groupId: .root, index: index(offset), hole: next.map { ChatListHole(index: index($0)) })
    }

    // MARK: Generations

    static let generationKey = ValueBoxKey("sync.dialog-list-generation")

    /// The generation of the last rebuild from the dialog list (0 before the first).
    static func generation(in transaction: Transaction) throws -> Int32 {
        (try transaction.getPreferencesEntry(key: generationKey) as? SyncDialogListGeneration)?.generation ?? 0
    }

    static func setGeneration(_ generation: Int32, in transaction: Transaction) throws {
        try transaction.setPreferencesEntry(key: generationKey, value: SyncDialogListGeneration(generation: generation))
    }

    static let startedGenerationKey = ValueBoxKey("sync.dialog-list-generation-started")

    /// The generation for a rebuild starting now: above the current one and above every rebuild started before (one
    /// stopped, discarded or killed before its closing batch may have marked chats with its own).
    static func nextGeneration(in transaction: Transaction) throws -> Int32 {
        let started = (try transaction.getPreferencesEntry(key: startedGenerationKey) as? SyncDialogListGeneration)?.generation ?? 0
        let next = Int64(max(try generation(in: transaction), started)) + 1
        return next > Int64(Int32.max) ? 1 : Int32(next)
    }

    /// Records that a rebuild of `generation` stored a batch (so the next rebuild takes a higher one).
    static func noteStarted(_ generation: Int32, in transaction: Transaction) throws {
        let started = (try transaction.getPreferencesEntry(key: startedGenerationKey) as? SyncDialogListGeneration)?.generation
        guard started != generation else { return }
        try transaction.setPreferencesEntry(key: startedGenerationKey, value: SyncDialogListGeneration(generation: generation))
    }

    /// Marks the chat's dialog fetched in `generation`.
    static func markFetched(_ peerId: PeerId, generation: Int32, in transaction: Transaction) throws {
        var state = try SyncStorage.chatState(peerId, in: transaction)
        guard state.dialogGeneration != generation else { return }
        state.dialogGeneration = generation
        try SyncStorage.setChatState(peerId, state, in: transaction)
    }

    /// After a rebuild that left a hole: every listed chat its pages did not reset (one listed below the hole, from an
    /// earlier sync) has its whole history made a hole in every space — what is stored of it is unverified (messages
    /// may have come, gone or changed while the client was away), so a view of it fetches the server's instead of
    /// showing the stored messages as complete.
    static func markUnverifiedHistories(generation: Int32, in transaction: Transaction) throws {
        let cloud = SyncNamespaces.cloudMessages
        for index in try transaction.getChatListIndices(groupId: .root) {
            let peerId = index.messageIndex.id.peerId
            guard try !isKnown(peerId, generation: generation, in: transaction) else { continue }
            for space in [MessageHistoryHoleSpace.everywhere] + SyncMessageTags.holeSpaces.map(MessageHistoryHoleSpace.tag) {
                try transaction.addHole(peerId: peerId, namespace: cloud, space: space, range: 1...Int32.max)
            }
        }
    }

    /// Whether the chat's dialog was fetched in `generation` (its read state, settings and top are the server's, kept
    /// since by updates); false for a chat never fetched, or fetched by an earlier rebuild and left below the hole.
    static func isKnown(_ peerId: PeerId, generation: Int32, in transaction: Transaction) throws -> Bool {
        try SyncStorage.chatState(peerId, in: transaction).dialogGeneration == generation
    }
}
