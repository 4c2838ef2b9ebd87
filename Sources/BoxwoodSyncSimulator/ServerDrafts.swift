import BoxwoodSync
import Boxwood

/// The account's cloud drafts: the last save wins; each save is a seq event (`draftMessage`) pushed to the account's
/// sessions and returned by getDifference, and dialogs carry the draft.
extension ServerState {
    /// Saves (empty text: clears) the draft of `peerId`; returns its date.
    mutating func saveDraft(peerId: PeerId, text: String) -> Int32 {
        let date = tick()
        let draft = text.isEmpty ? nil : ApiDraft(text: text, date: date)
        chats[peerId, default: ChatRecord()].draft = draft
        let update = ApiUpdate.draftMessage(peerId: peerId, draft: draft)
        pushSeqEvent(update, seq: recordSeqEvent(date: date, update), date: date)
        return date
    }
}
