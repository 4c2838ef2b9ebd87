import Testing
import Boxwood

@Suite struct ModelRoundTripTests {
    private let peer = PeerId(namespace: PeerId.Namespace(1), id: PeerId.Id(-42))
    private var index: MessageIndex { MessageIndex(id: MessageId(peerId: peer, namespace: 2, id: 3), timestamp: -4) }

    @Test func valueTypesRoundTrip() throws {
        #expect(try roundTrip(MessageId(peerId: peer, namespace: .min, id: .max)) == MessageId(peerId: peer, namespace: .min, id: .max))
        #expect(try roundTrip(index) == index)
        #expect(try roundTrip(MediaId(namespace: -1, id: .min)) == MediaId(namespace: -1, id: .min))
        for pinning: UInt16? in [nil, 0, UInt16.max] {
            let chatListIndex = ChatListIndex(pinningIndex: pinning, messageIndex: index)
            #expect(try roundTrip(chatListIndex) == chatListIndex)
        }
        #expect(try roundTrip(ChatListHole(index: index)) == ChatListHole(index: index))
        let forward = StoreMessageForwardInfo(authorId: peer, sourceId: PeerId(7), sourceMessageId: index.id, date: 9, authorSignature: "sig")
        #expect(try roundTrip(forward) == forward)
        let bare = StoreMessageForwardInfo(authorId: nil, sourceId: nil, sourceMessageId: nil, date: 0, authorSignature: nil)
        #expect(try roundTrip(bare) == bare)
    }

    @Test func readStatesRoundTrip() throws {
        let idBased = PeerReadState.idBased(maxIncomingReadId: 10, maxOutgoingReadId: 8, maxKnownId: 12, count: 2, markedUnread: true)
        let indexBased = PeerReadState.indexBased(maxIncomingReadIndex: index, maxOutgoingReadIndex: index.predecessor(), count: 0, markedUnread: false)
        #expect(try roundTrip(idBased) == idBased)
        #expect(try roundTrip(indexBased) == indexBased)
        let combined = CombinedPeerReadState(states: [0: idBased, 2: indexBased])
        #expect(try roundTrip(combined) == combined)
        #expect(try roundTrip(CombinedPeerReadState(states: [:])) == CombinedPeerReadState(states: [:]))
    }

    @Test func readStateSemantics() {
        let state = PeerReadState.idBased(maxIncomingReadId: 10, maxOutgoingReadId: 8, maxKnownId: 12, count: 2, markedUnread: false)
        let at = { (id: Int32) in MessageIndex(id: MessageId(peerId: self.peer, namespace: 0, id: id), timestamp: 0) }
        #expect(state.isIncomingMessageIndexRead(at(10)) && !state.isIncomingMessageIndexRead(at(11)))
        #expect(state.isOutgoingMessageIndexRead(at(8)) && !state.isOutgoingMessageIndexRead(at(9)))
        #expect(state.isUnread && state.count == 2 && state.maxKnownId == 12)
        #expect(!state.withAddedCount(-5).isUnread && state.withAddedCount(-5).count == 0)
        #expect(state.withAddedCount(-2).withMarkedUnread(true).isUnread)
        let byIndex = PeerReadState.indexBased(maxIncomingReadIndex: index, maxOutgoingReadIndex: index, count: 0, markedUnread: false)
        #expect(byIndex.isIncomingMessageIndexRead(index) && !byIndex.isIncomingMessageIndexRead(index.successor()))
        #expect(byIndex.maxKnownId == nil && !byIndex.isUnread)
        let combined = CombinedPeerReadState(states: [0: state, 2: byIndex.withMarkedUnread(true)])
        #expect(combined.count == 2 && combined.markedUnread && combined.isUnread)
        #expect(combined.isIncomingMessageIndexRead(at(3)))
        #expect(combined.isIncomingMessageIndexRead(index))
        #expect(!combined.isIncomingMessageIndexRead(MessageIndex(id: MessageId(peerId: peer, namespace: 1, id: 1), timestamp: 0)))
    }

    @Test func storeMessagesRoundTrip() throws {
        try registerTestTypes()
        let full = sampleStoreMessage()
        #expect(storeMessagesEqual(try roundTrip(full), full))
        let partial = StoreMessage(id: .partial(peer, 1), groupingKey: 5, threadId: -6, timestamp: 100, flags: [.unsent, .failed],
                                   globalTags: GlobalMessageTags(rawValue: 1), localTags: LocalMessageTags(rawValue: 0x8000_0000),
                                   authorId: nil, text: "")
        let decoded = try roundTrip(partial)
        #expect(storeMessagesEqual(decoded, partial))
        #expect(decoded.id == .partial(peer, 1) && decoded.index == nil)
        #expect(full.index == MessageIndex(id: MessageId(peerId: full.id.peerId, namespace: 0, id: 4_242), timestamp: 1_709_251_200))
    }

    @Test func appProtocolTypesRoundTripThroughTheRegistry() throws {
        try registerTestTypes()
        let values: [any PostboxCoding] = [
            TestUser(id: peer, firstName: "A", lastName: "B", username: "ab", associatedPeerId: PeerId(8)),
            TestPresence(lastSeen: 123),
            TestNotificationSettings(muteUntil: .max),
            TestCachedData(about: "about", pinnedMessageId: index.id, memberIds: [peer, PeerId(1)]),
            TestPreferences(autoDownload: false, limits: [1 << 40]),
            TestStickerItem(fileId: -9, emoji: ["🙂", "x"]),
            TestImage(mediaId: nil, sizes: [], caption: "c"),
            ReplyAttribute(messageId: index.id),
        ]
        for value in values {
            let decoded = try PostboxDecoder.decodeRoot(from: encodeRoot(value))
            #expect(type(of: decoded) == type(of: value))
            switch (decoded, value) {
            case let (a as any Peer, b as any Peer): #expect(a.isEqual(b) && a.id == b.id)
            case let (a as any PeerPresence, b as any PeerPresence): #expect(a.isEqual(to: b))
            case let (a as any PeerNotificationSettings, b as any PeerNotificationSettings): #expect(a.isEqual(to: b))
            case let (a as any CachedPeerData, b as any CachedPeerData): #expect(a.isEqual(to: b) && a.peerIds == b.peerIds)
            case let (a as any PreferencesEntry, b as any PreferencesEntry): #expect(a.isEqual(to: b))
            case let (a as any OrderedItemListEntryContents, b as any OrderedItemListEntryContents): #expect(a.isEqual(to: b))
            case let (a as any Media, b as any Media): #expect(a.isEqual(to: b) && a.id == nil)
            case let (a as any MessageAttribute, b as any MessageAttribute): #expect(a.isEqual(to: b) && a.associatedMessageIds == [index.id])
            default: Issue.record("unexpected type \(type(of: decoded))")
            }
        }
        let user = values[0] as! TestUser
        #expect(user.associatedPeerId == PeerId(8) && user.notificationSettingsPeerId == nil)
        #expect(!user.isEqual(TestChannel(id: peer, title: "A")))
        #expect(TestNotificationSettings(muteUntil: nil).isRemovedFromTotalUnreadCount(default: true))
        #expect(!PeerIndexNameRepresentation.title(title: "t", addressNames: []).isEmpty)
        #expect(PeerIndexNameRepresentation.personName(first: "", last: "", addressNames: [], phoneNumber: nil).isEmpty)
    }

    @Test func enumsStoredAsRawValues() {
        #expect(PeerGroupId(rawValue: 0) == .root && PeerGroupId.root.rawValue == 0)
        #expect(PeerGroupId(rawValue: PeerGroupId.group(5).rawValue) == .group(5))
        #expect(MessageFlags(rawValue: 4) == .incoming && MessageFlags.unsent.rawValue == 1 && MessageFlags.failed.rawValue == 2)
        #expect(MessageTags(rawValue: 0b1010).singleTags == [MessageTags(rawValue: 2), MessageTags(rawValue: 8)])
        #expect(StoreMessageId.partial(peer, 3).peerId == peer && StoreMessageId.id(index.id).namespace == 2)
    }

    @Test func readModelResolvesIndexAndPeer() {
        let user = TestUser(id: peer, firstName: "A", lastName: "", username: nil)
        let forward = StoreMessageForwardInfo(authorId: peer, sourceId: nil, sourceMessageId: nil, date: 1, authorSignature: nil)
        let message = Message(stableId: 1, stableVersion: 0, id: index.id, timestamp: index.timestamp, flags: [.incoming],
                              forwardInfo: MessageForwardInfo(forward, author: user, source: nil), authorId: peer, author: user,
                              text: "t", attributes: [EditedAttribute(date: 2)], peers: [peer: user])
        #expect(message.index == index)
        #expect(message.peer?.isEqual(user) == true)
        #expect(message.forwardInfo?.author?.id == peer)
        #expect(message.storeMessage.forwardInfo == forward && message.storeMessage.authorId == peer)
    }
}
