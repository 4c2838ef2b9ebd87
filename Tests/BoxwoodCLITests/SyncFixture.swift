import Boxwood
import BoxwoodStore
@testable import BoxwoodSync

/// A small sync database, written the way the sync layer writes one (``SyncStorage``), for `search` and
/// `history`:
///
/// - users: the account 0:1000 ("Me Myself"), Alice Smith 0:1001, Bob 0:1002 (only a username); 0:1999 is
///   an author that is not stored;
/// - channel 2:3001 "Boxwood devs": messages 241…250 stored (ids 1…240 are a hole), 245 pinned, 248 edited,
///   and one unsent message (local id 1);
/// - group 1:2001 "Fox group": messages 10 (by 0:1999) and 11 (by the account), no holes.
///
/// Dates are `base + id` (channel) and `base + 400 + id` (group), so the group's messages are the newest.
enum SyncFixture {
    static let base: Int32 = 1_700_000_000
    static let account = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1000))
    static let alice = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1001))
    static let bob = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1002))
    static let stranger = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1999))
    static let channel = PeerId(namespace: SyncNamespaces.channel, id: PeerId.Id(3001))
    static let group = PeerId(namespace: SyncNamespaces.group, id: PeerId.Id(2001))

    /// The text of channel message `id`.
    static func channelText(_ id: Int32) -> String {
        switch id {
        case 245: return "the quick brown fox"
        case 248: return "fox jumps again\nsecond line"
        default: return "release notes \(id)"
        }
    }

    static func create(at path: String) async throws {
        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: path)
        let account = self.account
        try await postbox.transaction { tx in
            try tx.updatePeers([
                SyncUser(id: account, firstName: "Me", lastName: "Myself", username: nil),
                SyncUser(id: alice, firstName: "Alice", lastName: "Smith", username: "alice"),
                SyncUser(id: bob, firstName: "", lastName: "", username: "bob"),
                SyncChat(id: channel, title: "Boxwood devs"),
                SyncChat(id: group, title: "Fox group"),
            ])
            let channelMessages = (241...250).map { (id: Int32) in
                ApiMessage(id: id, peerId: channel, fromId: id % 2 == 0 ? alice : bob, date: base + id, text: channelText(id),
                           outgoing: false, editVersion: id == 248 ? 1 : 0, pinned: id == 245)
            }
            try SyncStorage.fill(peerId: channel, range: 241...(Int32.max - 1), messages: channelMessages, accountPeerId: account, in: tx)
            let groupMessages = [
                ApiMessage(id: 10, peerId: group, fromId: stranger, date: base + 410, text: "a fox in the group", outgoing: false),
                ApiMessage(id: 11, peerId: group, fromId: account, date: base + 411, text: "hello group", outgoing: true),
            ]
            try SyncStorage.fill(peerId: group, range: 1...(Int32.max - 1), messages: groupMessages, accountPeerId: account, in: tx)
            try tx.addMessages([StoreMessage(id: .partial(channel, SyncNamespaces.localMessages), timestamp: base + 300,
                                             authorId: account, text: "on its way")], location: .random)
        }
        try await postbox.close()
    }
}
