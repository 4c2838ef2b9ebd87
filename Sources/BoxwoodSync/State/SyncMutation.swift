import Boxwood

/// Where an applied change came from: pushed in real time, or fetched while catching up (a UI coalesces
/// catch-up; notifications are for real time only).
public enum SyncSource: Hashable, Sendable {
    case realtime
    case catchUp
}

/// One database change computed from updates, replayed in order inside the batch's single transaction
/// (Telegram's `AccountStateMutationOperation`). Every one of them is idempotent: replaying it twice changes
/// nothing the second time.
enum SyncMutation: Sendable {
    /// Stores users; `overwrite` false only inserts unknown ones (lists carried by pushes and differences may
    /// be older than a rename already applied; renames arrive as their own updates).
    case mergeUsers([ApiUser], overwrite: Bool)
    case mergeChats([ApiChat], overwrite: Bool)
    /// Stores messages that are not stored yet (the newest of their chats: holes above them are closed).
    case addMessages([ApiMessage], SyncSource)
    case addEncryptedMessages([ApiEncryptedMessage], SyncSource)
    /// Replaces a stored message's content when `message.editVersion` is newer.
    case editMessage(ApiMessage)
    /// Deletes by account-wide id (users and groups).
    case deleteMessagesWithGlobalIds([Int32], SyncSource)
    case deleteMessages([MessageId], SyncSource)
    case readInbox(MessageId, SyncSource)
    case readOutbox(MessageId)
    case setPinned(peerId: PeerId, ids: [Int32], pinned: Bool)
    /// The account saw these messages' mentions (by account-wide id): stored ones lose the unread-mention tag.
    case readMessageContentsWithGlobalIds([Int32])
    case readMessageContents([MessageId])
    case updatePresence(PeerId, ApiUserStatus)
    case updateNotifySettings(PeerId, muteUntil: Int32)
    /// The cloud draft of a chat (nil: none), unless this device has a newer one waiting to be sent.
    case updateDraft(PeerId, ApiDraft?)
    /// Rebuilds a chat from its dialog: read state, settings, newest messages, and a hole over everything below
    /// them (stored older messages stay, unverified, under the hole until it is filled).
    case resetChat(ApiDialog, messages: [ApiMessage])
    /// Takes a discovered chat's dialog without touching its history (``SyncStorage/refreshChat(_:in:)``).
    case refreshChat(ApiDialog)
    /// Pins these chats in this order at the top of the root chat list and unpins the others (the pinned dialogs
    /// of the dialog list's first page).
    case setPinnedChats([PeerId])
    /// A rebuild's last word on the list: every chat-list hole goes, and the dialogs below `offset` (nil: none) are
    /// one hole.
    case setChatListHole(below: ApiDialogsOffset?)
    /// A page of the list below the hole at `offset` was stored: the hole moves down to `next` (nil: the list is
    /// complete).
    case replaceChatListHole(at: ApiDialogsOffset, next: ApiDialogsOffset?)
    case updateChannelPts(PeerId, Int32)
}

/// The batch being built from updates before its replay (Telegram's `AccountMutableState`): the cursors the
/// batch starts from (checked again inside the replay transaction), the cursors it moves to, and the
/// mutations in order.
struct SyncMutableState: Sendable {
    /// The stored cursor the batch was computed from (nil: the account has not synced yet).
    let initialState: SyncAccountState?
    /// The stored pts of every channel the batch read (nil: no state stored).
    private(set) var initialChannelPts: [PeerId: Int32?]
    /// The stored ``SyncStoredAnswers`` count before the batch's first request; a batch that resets chats is
    /// replayed only while it is unchanged.
    let initialStoredAnswers: Int64
    var state: SyncAccountState
    /// Whether the replay stores ``state`` as the account's cursor. False for a page of a reset from the dialog
    /// list other than the last: the cursor stays the stored one (``initialState``) until every page is stored, so
    /// a process killed between pages starts the reset again.
    let writesCursor: Bool
    var channelPts: [PeerId: Int32] = [:]
    /// The generation of the rebuild from the dialog list the batch belongs to (its pages and its closing batch; nil
    /// for any other batch): the chats it resets are marked with it, and the closing batch makes it the current one
    /// (``SyncChatListHoles``). Each rebuild attempt has a generation of its own, so the marks of an attempt that
    /// never closed are not taken for the next attempt's.
    var dialogGeneration: Int32?
    /// Whether the batch belongs to a rebuild from the dialog list.
    var startsDialogGeneration: Bool { dialogGeneration != nil }
    private(set) var operations: [SyncMutation] = []
    private let branchOperationIndex: Int
    /// The channel cursors when this branch was made (empty for a batch that is not a branch): `merge` takes only
    /// the ones the branch moved, so that a branch does not put back another branch's channel at its old pts.
    private let branchChannelPts: [PeerId: Int32]

    init(initialState: SyncAccountState?, state: SyncAccountState, storedAnswers: Int64, writesCursor: Bool = true) {
        self.initialState = initialState
        self.state = state
        self.writesCursor = writesCursor
        initialStoredAnswers = storedAnswers
        initialChannelPts = [:]
        branchOperationIndex = 0
        branchChannelPts = [:]
    }

    private init(copying other: SyncMutableState) {
        initialState = other.initialState
        initialChannelPts = other.initialChannelPts
        initialStoredAnswers = other.initialStoredAnswers
        state = other.state
        writesCursor = other.writesCursor
        dialogGeneration = other.dialogGeneration
        channelPts = other.channelPts
        operations = other.operations
        branchOperationIndex = other.operations.count
        branchChannelPts = other.channelPts
    }

    mutating func add(_ operation: SyncMutation) { operations.append(operation) }

    /// Whether the batch holds a `resetChat` (then the replay checks ``initialStoredAnswers``).
    var resetsChats: Bool {
        operations.contains {
            switch $0 {
            case .resetChat, .refreshChat: true
            default: false
            }
        }
    }

    /// Whether the batch stores messages.
    var addsMessages: Bool {
        operations.contains {
            switch $0 {
            case .addMessages, .addEncryptedMessages: true
            default: false
            }
        }
    }

    /// The dialogs of the batch's `resetChat` and `refreshChat` operations.
    var resetDialogs: [ApiDialog] {
        operations.compactMap {
            switch $0 {
            case let .resetChat(dialog, _), let .refreshChat(dialog): dialog
            default: nil
            }
        }
    }

    /// Records the stored pts of a channel (what the replay verifies) and uses it as the working value.
    mutating func loadChannel(_ peerId: PeerId, storedPts: Int32?) {
        guard initialChannelPts[peerId] == nil else { return }
        initialChannelPts[peerId] = .some(storedPts)
        if let storedPts, channelPts[peerId] == nil { channelPts[peerId] = storedPts }
    }

    mutating func setChannelPts(_ peerId: PeerId, _ pts: Int32) {
        channelPts[peerId] = pts
        operations.append(.updateChannelPts(peerId, pts))
    }

    /// A copy whose operations from now on can be merged back (one per channel fetched in parallel).
    func branch() -> SyncMutableState { SyncMutableState(copying: self) }

    /// Takes a branch's new operations and the channel cursors it moved (the others are the base's, which an
    /// earlier merged branch may have moved since).
    mutating func merge(_ branch: SyncMutableState) {
        operations.append(contentsOf: branch.operations[branch.branchOperationIndex...])
        for (peerId, pts) in branch.channelPts where branch.branchChannelPts[peerId] != pts { channelPts[peerId] = pts }
        for (peerId, stored) in branch.initialChannelPts where initialChannelPts[peerId] == nil { initialChannelPts[peerId] = stored }
    }

    var isEmpty: Bool { operations.isEmpty && (!writesCursor || state == initialState) }
}
