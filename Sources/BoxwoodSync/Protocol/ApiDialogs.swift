import Boxwood

/// Where a page of the dialog list starts (Telegram's `offset_date`, `offset_id`, `offset_peer`): the position of
/// the last dialog of the previous page. Dialogs are ordered by their top message's date, then its id, then the
/// peer id, newest first; a page holds the dialogs strictly below its offset.
public struct ApiDialogsOffset: Hashable, Sendable, Codable, Comparable {
    /// The date of the dialog's top message (0: the chat is empty).
    public var date: Int32
    /// The id of the dialog's top message (0: the chat is empty).
    public var id: Int32
    public var peerId: PeerId

    public init(date: Int32, id: Int32, peerId: PeerId) {
        self.date = date
        self.id = id
        self.peerId = peerId
    }

    /// Date, then id, then peer: a dialog with a lesser offset comes later in the list.
    public static func < (lhs: ApiDialogsOffset, rhs: ApiDialogsOffset) -> Bool {
        (lhs.date, lhs.id, lhs.peerId) < (rhs.date, rhs.id, rhs.peerId)
    }
}

/// One page of the dialog list, the answer to `getDialogs` (Telegram's `messages.dialogsSlice`): the dialogs with
/// their top messages and the users and chats they mention. The first page (asked without an offset) starts with
/// every pinned dialog, in pin order, followed by the newest unpinned ones; later pages hold unpinned dialogs only.
public struct ApiDialogs: Hashable, Sendable, Codable {
    public var dialogs: [ApiDialog]
    /// The top message of each dialog (at least; a server may send more of the newest).
    public var messages: [ApiMessage]
    public var chats: [ApiChat]
    public var users: [ApiUser]
    /// The account's cursor when the page was read. A client rebuilding from the list keeps the first page's: what
    /// changed while it read the later pages comes again from the difference after that cursor.
    public var state: ApiUpdatesState
    /// Where the next page starts (the position of this page's last unpinned dialog); nil: this is the last page.
    public var nextOffset: ApiDialogsOffset?

    public init(dialogs: [ApiDialog], messages: [ApiMessage], chats: [ApiChat], users: [ApiUser], state: ApiUpdatesState,
                nextOffset: ApiDialogsOffset? = nil) {
        self.dialogs = dialogs
        self.messages = messages
        self.chats = chats
        self.users = users
        self.state = state
        self.nextOffset = nextOffset
    }
}
