import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// The peer, contact, message, ordered-list and unsent views: first snapshot, an update after a relevant
/// transaction, and no emission after irrelevant ones.
@Suite(.timeLimit(.minutes(1))) struct PeerViewsTests {
    init() throws { try registerViewTestTypes() }

    func withPostbox(_ tag: String, _ body: (Postbox) async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "bw-peer-views-\(tag)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let postbox = try await Postbox.open(path: path, seedConfiguration: PostboxHistoryTests.seed)
        try await body(postbox)
        try await postbox.close()
    }

    static let user = peer(0, 1)
    static let secret = peer(2, 1)
    static let member = peer(0, 2)
    static let other = peer(0, 9)
    static let pinned = MessageId(peerId: peer(0, 1), namespace: 0, id: 5)

    static func user(_ id: PeerId, _ name: String) -> TestUser { TestUser(id: id, firstName: name, lastName: "", username: nil) }

    @Test func peerViewFollowsThePeerAndWhatItRefersTo() async throws {
        try await withPostbox("peer") { postbox in
            let (user, secret, member, other, pinned) = (Self.user, Self.secret, Self.member, Self.other, Self.pinned)
            try await expectSelectiveView(postbox, .peer(secret, components: .all), initial: { view in
                let view = view as! PeerView
                return view.peers.isEmpty && view.cachedData == nil && !view.peerIsContact && view.contactPeerId == secret && view.groupId == .root
            }, steps: [
                // The secret chat and its user arrive: the view covers both, and the user is the contact peer.
                .relevant({ tx in try tx.updatePeers([TestSecretChat(id: secret, userId: user), Self.user(user, "Ann")]) }, expect: { view in
                    let view = view as! PeerView
                    return Set(view.peers.keys) == [secret, user] && view.contactPeerId == user
                }),
                .irrelevant { tx in
                    try tx.updatePeers([Self.user(other, "Zed")])
                    try tx.updatePeerPresences([other: TestPresence(lastSeen: 1)])
                    try tx.updatePeerNotificationSettings([other: TestNotificationSettings(muteUntil: 1)])
                    try tx.updatePeerCachedData(peerIds: [other, secret]) { _, _ in TestCachedData(about: "x", pinnedMessageId: nil, memberIds: []) }
                    try tx.replaceContactPeerIds([other])
                    try tx.updatePeerChatListInclusion(other, inclusion: .notIncluded)
                    // The same user stored again changes nothing.
                    try tx.updatePeers([Self.user(user, "Ann")])
                },
                .relevant({ tx in try tx.updatePeerPresences([user: TestPresence(lastSeen: 7)]) }, expect: { view in
                    ((view as! PeerView).peerPresences[user] as? TestPresence)?.lastSeen == 7
                }),
                // The user's cached data names a member and a pinned message; both are loaded.
                .relevant({ tx in
                    try tx.updatePeers([Self.user(member, "Mo")])
                    try tx.addMessages([storeMessage(pinned, timestamp: 5, text: "pinned")], location: .random)
                    try tx.updatePeerCachedData(peerIds: [user]) { _, _ in TestCachedData(about: "hi", pinnedMessageId: pinned, memberIds: [member]) }
                }, expect: { view in
                    let view = view as! PeerView
                    return (view.cachedData as? TestCachedData)?.about == "hi" && view.peers[member] != nil && view.messages[pinned]?.text == "pinned"
                }),
                .relevant({ tx in try tx.updatePeerPresences([member: TestPresence(lastSeen: 3)]) }, expect: { view in
                    ((view as! PeerView).peerPresences[member] as? TestPresence)?.lastSeen == 3
                }),
                .relevant({ tx in try tx.replaceContactPeerIds([other, user]) }, expect: { ($0 as! PeerView).peerIsContact }),
                // The user's settings apply to the secret chat.
                .relevant({ tx in try tx.updatePeerNotificationSettings([user: TestNotificationSettings(muteUntil: 9)]) }, expect: { view in
                    ((view as! PeerView).notificationSettings as? TestNotificationSettings)?.muteUntil == 9
                }),
                .relevant({ tx in try tx.updatePeerChatListInclusion(secret, inclusion: .ifHasMessagesOrOneOf(groupId: .group(1), pinningIndex: nil, minTimestamp: nil)) },
                          expect: { ($0 as! PeerView).groupId == .group(1) }),
                .irrelevant { tx in try tx.addMessages([storeMessage(MessageId(peerId: user, namespace: 0, id: 6), timestamp: 6)], location: .random) },
                .relevant({ tx in try tx.updateMessage(pinned, storeMessage(pinned, timestamp: 5, text: "edited")) }, expect: { view in
                    (view as! PeerView).messages[pinned]?.text == "edited"
                }),
                .relevant({ tx in try tx.deleteMessages([pinned]) }, expect: { ($0 as! PeerView).messages.isEmpty }),
            ])
            // Without components, cached data is neither loaded nor watched.
            try await expectSelectiveView(postbox, .peer(user, components: []), initial: { view in
                let view = view as! PeerView
                return view.peer != nil && view.cachedData == nil && view.groupId == nil && view.peers.count == 1
            }, steps: [
                .irrelevant { tx in try tx.updatePeerCachedData(peerIds: [user]) { _, _ in TestCachedData(about: "new", pinnedMessageId: nil, memberIds: [other]) } },
                .relevant({ tx in try tx.updatePeers([Self.user(user, "Bea")]) }, expect: { (($0 as! PeerView).peer as? TestUser)?.firstName == "Bea" }),
            ])
        }
    }

    @Test func peerRecordViewsFollowTheirPeersOnly() async throws {
        try await withPostbox("records") { postbox in
            let (user, member, other, secret) = (Self.user, Self.member, Self.other, Self.secret)
            let state = try CodableEntry(TestChannelState(pts: 10, invalidatedPts: nil))
            try await expectSelectiveView(postbox, .peerChatState(user), initial: { ($0 as! PeerChatStateView).chatState == nil }, steps: [
                .irrelevant { tx in
                    try tx.setPeerChatState(other, state: state)
                    try tx.updatePeers([Self.user(user, "Ann")])
                },
                .relevant({ tx in try tx.setPeerChatState(user, state: state) }, expect: { ($0 as! PeerChatStateView).chatState == state }),
                .irrelevant { tx in try tx.setPeerChatState(user, state: state) },
                .relevant({ tx in try tx.setPeerChatState(user, state: nil) }, expect: { ($0 as! PeerChatStateView).chatState == nil }),
            ])
            try await expectSelectiveView(postbox, .cachedPeerData(user), initial: { ($0 as! CachedPeerDataView).cachedPeerData == nil }, steps: [
                .irrelevant { tx in
                    try tx.updatePeerCachedData(peerIds: [other]) { _, _ in TestCachedData(about: "o", pinnedMessageId: nil, memberIds: []) }
                    try tx.updatePeerPresences([user: TestPresence(lastSeen: 1)])
                },
                .relevant({ tx in try tx.updatePeerCachedData(peerIds: [user]) { _, _ in TestCachedData(about: "u", pinnedMessageId: nil, memberIds: []) } },
                          expect: { (($0 as! CachedPeerDataView).cachedPeerData as? TestCachedData)?.about == "u" }),
            ])
            try await expectSelectiveView(postbox, .peerPresences([user, member]), initial: { view in
                ((view as! PeerPresencesView).presences[user] as? TestPresence)?.lastSeen == 1
            }, steps: [
                .irrelevant { tx in
                    try tx.updatePeerPresences([other: TestPresence(lastSeen: 4), user: TestPresence(lastSeen: 1)])
                    try tx.updatePeers([Self.user(member, "Mo")])
                },
                .relevant({ tx in try tx.updatePeerPresences([member: TestPresence(lastSeen: 2)]) }, expect: { view in
                    let presences = (view as! PeerPresencesView).presences
                    return presences.count == 2 && (presences[member] as? TestPresence)?.lastSeen == 2
                }),
            ])
            try await expectSelectiveView(postbox, .peerNotificationSettings([user, secret]), initial: { ($0 as! PeerNotificationSettingsView).notificationSettings.isEmpty }, steps: [
                .irrelevant { tx in try tx.updatePeerNotificationSettings([other: TestNotificationSettings(muteUntil: 1)]) },
                .relevant({ tx in try tx.updatePeerNotificationSettings([user: TestNotificationSettings(muteUntil: 2)]) }, expect: { view in
                    let settings = (view as! PeerNotificationSettingsView).notificationSettings
                    return settings.count == 1 && (settings[user] as? TestNotificationSettings)?.muteUntil == 2
                }),
                // The secret chat's record names the user, whose settings then apply to it too.
                .relevant({ tx in try tx.updatePeers([TestSecretChat(id: secret, userId: user)]) }, expect: { view in
                    ((view as! PeerNotificationSettingsView).notificationSettings[secret] as? TestNotificationSettings)?.muteUntil == 2
                }),
                .relevant({ tx in try tx.updatePeerNotificationSettings([user: TestNotificationSettings(muteUntil: 3)]) }, expect: { view in
                    let settings = (view as! PeerNotificationSettingsView).notificationSettings
                    return settings.values.allSatisfy { ($0 as? TestNotificationSettings)?.muteUntil == 3 } && settings.count == 2
                }),
            ])
        }
    }

    @Test func contactViewsFollowTheContactList() async throws {
        try await withPostbox("contacts") { postbox in
            let (user, member, other) = (Self.user, Self.member, Self.other)
            try await postbox.transaction { tx in try tx.updatePeers([Self.user(user, "Ann")]) }
            try await expectSelectiveView(postbox, .contacts(includePresences: true), initial: { ($0 as! ContactPeersView).peerIds.isEmpty }, steps: [
                .irrelevant { tx in
                    try tx.updatePeers([Self.user(other, "Zed")])
                    try tx.updatePeerPresences([other: TestPresence(lastSeen: 1)])
                },
                .relevant({ tx in try tx.replaceContactPeerIds([user, member]) }, expect: { view in
                    let view = view as! ContactPeersView
                    return view.peerIds == [user, member] && Set(view.peers.keys) == [user] && view.presences.isEmpty
                }),
                .irrelevant { tx in try tx.replaceContactPeerIds([member, user]) },
                .relevant({ tx in try tx.updatePeerPresences([member: TestPresence(lastSeen: 5)]) }, expect: { view in
                    ((view as! ContactPeersView).presences[member] as? TestPresence)?.lastSeen == 5
                }),
                .relevant({ tx in try tx.updatePeers([Self.user(member, "Mo")]) }, expect: { ($0 as! ContactPeersView).peers.count == 2 }),
                .relevant({ tx in try tx.replaceContactPeerIds([member]) }, expect: { view in
                    let view = view as! ContactPeersView
                    return view.peerIds == [member] && Set(view.peers.keys) == [member]
                }),
            ])
            try await expectSelectiveView(postbox, .contacts(includePresences: false), initial: { ($0 as! ContactPeersView).peerIds == [member] }, steps: [
                .irrelevant { tx in try tx.updatePeerPresences([member: TestPresence(lastSeen: 6)]) },
                .relevant({ tx in try tx.replaceContactPeerIds([]) }, expect: { ($0 as! ContactPeersView).peerIds.isEmpty }),
            ])
            try await expectSelectiveView(postbox, .isContact(user), initial: { !($0 as! IsContactView).isContact }, steps: [
                .irrelevant { tx in
                    try tx.replaceContactPeerIds([other])
                    try tx.updatePeers([Self.user(user, "Bea")])
                },
                .relevant({ tx in try tx.replaceContactPeerIds([other, user]) }, expect: { ($0 as! IsContactView).isContact }),
            ])
        }
    }

    @Test func messagesAndUnsentViewsFollowTheirMessages() async throws {
        try await withPostbox("messages") { postbox in
            let chat = Self.user
            let (first, second, third) = (MessageId(peerId: chat, namespace: 0, id: 1), MessageId(peerId: chat, namespace: 0, id: 2),
                                          MessageId(peerId: chat, namespace: 0, id: 3))
            try await expectSelectiveView(postbox, .messages([first, second]), initial: { ($0 as! MessagesView).messages.isEmpty }, steps: [
                .irrelevant { tx in
                    try tx.addMessages([storeMessage(third, timestamp: 3, text: "c")], location: .random)
                    try tx.addMessages([storeMessage(MessageId(peerId: Self.other, namespace: 0, id: 1), timestamp: 1)], location: .random)
                },
                .relevant({ tx in try tx.addMessages([storeMessage(first, timestamp: 1, text: "a")], location: .random) }, expect: { view in
                    (view as! MessagesView).messages.mapValues(\.text) == [first: "a"]
                }),
                .relevant({ tx in try tx.updateMessage(first, storeMessage(first, timestamp: 1, text: "a2")) }, expect: { view in
                    (view as! MessagesView).messages[first]?.text == "a2"
                }),
                // Message 3 becomes message 2: it leaves no view it was not in and enters this one.
                .relevant({ tx in try tx.updateMessage(third, storeMessage(second, timestamp: 3, text: "c")) }, expect: { view in
                    (view as! MessagesView).messages.mapValues(\.text) == [first: "a2", second: "c"]
                }),
                .relevant({ tx in try tx.deleteMessages([first]) }, expect: { ($0 as! MessagesView).messages.keys.sorted() == [second] }),
            ])
            let unsentId = MessageId(peerId: chat, namespace: 0, id: 10)
            try await expectSelectiveView(postbox, .unsentMessages, initial: { ($0 as! UnsentMessagesView).indices.isEmpty }, steps: [
                .irrelevant { tx in
                    try tx.addMessages([storeMessage(MessageId(peerId: chat, namespace: 0, id: 11), timestamp: 11)], location: .random)
                    try tx.addMessages([storeMessage(MessageId(peerId: chat, namespace: 0, id: 12), timestamp: 12, flags: [.unsent, .failed])], location: .random)
                },
                .relevant({ tx in try tx.addMessages([storeMessage(unsentId, timestamp: 10, flags: [.unsent])], location: .random) }, expect: { view in
                    (view as! UnsentMessagesView).indices == [MessageIndex(id: unsentId, timestamp: 10)]
                }),
                .irrelevant { tx in try tx.updateMessage(MessageId(peerId: chat, namespace: 0, id: 11), storeMessage(MessageId(peerId: chat, namespace: 0, id: 11), timestamp: 11, text: "e")) },
                // Sent: the flag is cleared.
                .relevant({ tx in try tx.updateMessage(unsentId, storeMessage(unsentId, timestamp: 20)) }, expect: { ($0 as! UnsentMessagesView).indices.isEmpty }),
            ])
        }
    }

    /// A database written before the unsent-message index existed gets it built when opened.
    @Test func unsentIndexIsBuiltForAnOlderDatabase() async throws {
        let path = NSTemporaryDirectory() + "bw-peer-views-unsent-upgrade-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let chat = Self.user
        let ids = (1...4).map { MessageId(peerId: chat, namespace: 0, id: $0) }
        var postbox = try await Postbox.open(path: path)
        try await postbox.transaction { tx in
            _ = try tx.addMessages([storeMessage(ids[0], timestamp: 1, flags: [.unsent]), storeMessage(ids[1], timestamp: 2),
                                storeMessage(ids[2], timestamp: 3, flags: [.unsent, .failed]), storeMessage(ids[3], timestamp: 4, flags: [.unsent])],
                               location: .random)
        }
        // Make it look older: no index entries and no mark that the index is complete.
        try await postbox.onQueue { [postbox] in
            try postbox.runTransaction { tx in
                let history = try tx.tables.history
                for index in try history.unsent.get() { try history.unsent.remove(index) }
                var mark = ValueBoxKey(length: 1)
                mark.setUInt8(0, value: 5)
                try postbox.valueBox.remove(history.metadata.table, key: mark)
                #expect(try !history.metadata.isUnsentIndexBuilt())
            }
        }
        try await postbox.close()
        postbox = try await Postbox.open(path: path)
        var iterator = postbox.combinedView(keys: [.unsentMessages]).makeAsyncIterator()
        let indices = (try await iterator.next()?.views[.unsentMessages] as? UnsentMessagesView)?.indices
        #expect(indices == [MessageIndex(id: ids[0], timestamp: 1), MessageIndex(id: ids[3], timestamp: 4)])
        try await postbox.close()
    }

    @Test func orderedItemListViewFollowsItsList() async throws {
        try await withPostbox("lists") { postbox in
            @Sendable func item(_ id: UInt8, _ fileId: Int64) -> OrderedItemListEntry {
                OrderedItemListEntry(id: MemoryBuffer([id]), contents: TestStickerItem(fileId: fileId, emoji: []))
            }
            @Sendable func ids(_ view: any PostboxView) -> [UInt8] { (view as! OrderedItemListView).items.map { $0.id.makeArray()[0] } }
            try await expectSelectiveView(postbox, .orderedItemList(id: 1), initial: { ($0 as! OrderedItemListView).items.isEmpty }, steps: [
                .irrelevant { tx in try tx.replaceOrderedItemListItems(collectionId: 2, items: [item(1, 1)]) },
                .relevant({ tx in try tx.replaceOrderedItemListItems(collectionId: 1, items: [item(1, 1), item(2, 2), item(3, 3)]) },
                          expect: { ids($0) == [1, 2, 3] }),
                .relevant({ tx in try tx.addOrMoveToFirstPositionOrderedItemListItem(collectionId: 1, item: item(3, 30), removeTailIfCountExceeds: 2) },
                          expect: { ids($0) == [3, 1] && (($0 as! OrderedItemListView).items[0].contents as? TestStickerItem)?.fileId == 30 }),
                .irrelevant { tx in try tx.removeOrderedItemListItem(collectionId: 1, itemId: MemoryBuffer([9])) },
                .relevant({ tx in try tx.updateOrderedItemListItem(collectionId: 1, itemId: MemoryBuffer([1]), item: TestStickerItem(fileId: 10, emoji: ["x"])) },
                          expect: { (($0 as! OrderedItemListView).items[1].contents as? TestStickerItem)?.fileId == 10 }),
                .relevant({ tx in try tx.removeOrderedItemListItem(collectionId: 1, itemId: MemoryBuffer([3])) }, expect: { ids($0) == [1] }),
            ])
        }
    }

    @Test func historyHoleEntriesCarryDirectionAndCount() async throws {
        try await withPostbox("hole-direction") { postbox in
            let chat = Self.user
            try await postbox.transaction { tx in
                try tx.addMessages((20...24).map { storeMessage(MessageId(peerId: chat, namespace: 0, id: $0), timestamp: $0) }, location: .upperHistoryBlock)
                try tx.addMessages([storeMessage(MessageId(peerId: chat, namespace: 0, id: 5), timestamp: 5)], location: .random)
                try tx.removeHole(peerId: chat, namespace: 0, space: .everywhere, range: 5...5)
            }
            // Holes now: 1...4 and 6...19. A newest-first window sees both below it; an anchor at 10 is inside
            // 6...19 and above 1...4; an anchor at 2 is inside 1...4 and below 6...19.
            let newest = PostboxViewKey.messageHistory(peerId: chat, namespace: 0, anchor: nil, count: 30, tag: nil)
            let anchor = { (id: Int32) in MessageIndex(id: MessageId(peerId: chat, namespace: 0, id: id), timestamp: id) }
            let around = PostboxViewKey.messageHistory(peerId: chat, namespace: 0, anchor: anchor(10), count: 40, tag: nil)
            let low = PostboxViewKey.messageHistory(peerId: chat, namespace: 0, anchor: anchor(2), count: 40, tag: nil)
            var iterator = postbox.combinedView(keys: [newest, around, low, .messageHistoryHoles]).makeAsyncIterator()
            let entries = (try await iterator.next()?.views[.messageHistoryHoles] as? MessageHistoryHolesView)?.entries ?? []
            func entry(_ range: ClosedRange<Int32>, _ direction: MessageHistoryHoleDirection, _ count: Int) -> MessageHistoryHolesViewEntry {
                MessageHistoryHolesViewEntry(peerId: chat, namespace: 0, space: .everywhere, range: range, direction: direction, count: count)
            }
            #expect(entries == [
                entry(1...4, .upperToLower, 30), entry(6...19, .upperToLower, 30),
                entry(1...4, .upperToLower, 40), entry(6...19, .aroundId(anchor(10).id), 40),
                entry(1...4, .aroundId(anchor(2).id), 40), entry(6...19, .lowerToUpper, 40),
            ])
        }
    }
}
