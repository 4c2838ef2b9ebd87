import Testing
@testable import Boxwood
import BoxwoodStore

@Suite struct MetadataTableTests {
    @Test func valuesRoundTripAcrossCommitAndReopen() throws {
        try withHarness("meta") { h in
            try h.transaction { () throws in
                #expect(try h.metadata.userVersion() == nil)
                #expect(try h.metadata.state() == nil)
                #expect(try h.metadata.transactionStateVersion() == 0)
                #expect(try h.metadata.masterClientId() == 0)
                #expect(try h.metadata.remoteContactCount() == 0)
                try h.metadata.setUserVersion(25)
                try h.metadata.setState(TestAccountState(pts: 10, qts: 2, date: 1_700_000_000, seq: 7))
                #expect(try h.metadata.incrementTransactionStateVersion() == 1)
                #expect(try h.metadata.incrementTransactionStateVersion() == 2)
                try h.metadata.setMasterClientId(-42)
                try h.metadata.setRemoteContactCount(311)
                #expect(h.metadata.updatedState as? TestAccountState == TestAccountState(pts: 10, qts: 2, date: 1_700_000_000, seq: 7))
                #expect(h.metadata.updatedRemoteContactCount == 311)
                #expect(h.metadata.updatedMasterClientId == -42)
            }
            h.resetChanges()
            #expect(h.metadata.updatedState == nil && h.metadata.updatedRemoteContactCount == nil && h.metadata.updatedMasterClientId == nil)
            // Byte layout: 8-byte big-endian int64 keys, little-endian raw integers.
            #expect(try h.raw(MetadataTable.descriptor, ValueBoxKey(int64: 1)) == [25, 0, 0, 0])
            #expect(try h.raw(MetadataTable.descriptor, ValueBoxKey(int64: 3)) == [2, 0, 0, 0, 0, 0, 0, 0])
            #expect(try h.raw(MetadataTable.descriptor, ValueBoxKey(int64: 6)) == [0x37, 0x01, 0, 0])
            try h.reopen()
            try h.transaction { () throws in
                #expect(try h.metadata.userVersion() == 25)
                #expect(try h.metadata.state() as? TestAccountState == TestAccountState(pts: 10, qts: 2, date: 1_700_000_000, seq: 7))
                #expect(try h.metadata.transactionStateVersion() == 2)
                #expect(try h.metadata.masterClientId() == -42)
                #expect(try h.metadata.remoteContactCount() == 311)
            }
        }
    }

    @Test func abortedTransactionAndExternalWritesDoNotServeStaleCache() throws {
        try withHarness("meta-cache") { h in
            h.clearsCachesOnExternalCommits = false
            try h.transaction { () throws in
                try h.metadata.setState(TestAccountState(pts: 1, qts: 0, date: 0, seq: 0))
                try h.metadata.setRemoteContactCount(5)
            }
            try h.abortedTransaction { () throws in
                try h.metadata.setState(TestAccountState(pts: 99, qts: 0, date: 0, seq: 0))
                try h.metadata.setRemoteContactCount(99)
                _ = try h.metadata.incrementTransactionStateVersion()
            }
            try h.transaction { () throws in
                #expect(try h.metadata.state() as? TestAccountState == TestAccountState(pts: 1, qts: 0, date: 0, seq: 0))
                #expect(try h.metadata.remoteContactCount() == 5)
                #expect(try h.metadata.transactionStateVersion() == 0)
            }
            // Another value box on the same database commits new values.
            let other = try TableHarness(path: h.path)
            defer { other.close() }
            try other.transaction { () throws in
                try other.metadata.setState(TestAccountState(pts: 2, qts: 0, date: 0, seq: 0))
                try other.metadata.setRemoteContactCount(6)
                _ = try other.metadata.incrementTransactionStateVersion()
            }
            try h.transaction { () throws in
                #expect(h.valueBox.lastBeginSawExternalCommits)
                // The version counter is never cached: this is how the change is noticed.
                #expect(try h.metadata.transactionStateVersion() == 1)
                // The caches still hold the old values until cleared.
                #expect(try h.metadata.remoteContactCount() == 5)
                h.metadata.clearMemoryCache()
                #expect(try h.metadata.state() as? TestAccountState == TestAccountState(pts: 2, qts: 0, date: 0, seq: 0))
                #expect(try h.metadata.remoteContactCount() == 6)
            }
        }
    }

    @Test func malformedValuesThrowInsteadOfTrapping() throws {
        try withHarness("meta-bad") { h in
            try h.transaction { () throws in
                try h.valueBox.set(MetadataTable.descriptor, key: ValueBoxKey(int64: 1), bytes: UnsafeRawBufferPointer(start: nil, count: 0))
                try h.valueBox.set(MetadataTable.descriptor, key: ValueBoxKey(int64: 2), value: MemoryBuffer([1, 2, 3]))
            }
            try h.transaction { () throws in
                #expect(throws: PostboxDecodingError.self) { try h.metadata.userVersion() }
                #expect(throws: PostboxDecodingError.self) { try h.metadata.state() }
            }
        }
    }
}

@Suite struct PeerTableTests {
    let alice = TestUser(id: peer(0, 1), firstName: "Alice", lastName: "A", username: "alice")
    let bob = TestUser(id: peer(0, 2), firstName: "Bob", lastName: "B", username: nil, associatedPeerId: peer(0, 1))
    let news = TestChannel(id: peer(2, 1_000_000_000_000), title: "News")

    @Test func writeBackRoundTripAndChanges() throws {
        try withHarness("peers") { h in
            try h.transaction { () throws in
                try h.peers.set(alice)
                try h.peers.set(news)
                // Reads see the dirty values; nothing is in the value box before the flush.
                #expect(try h.peers.get(alice.id) as? TestUser == alice)
                #expect(try h.peers.get(news.id) as? TestChannel == news)
                #expect(try h.raw(PeerTable.descriptor, .peerId(alice.id)) == nil)
                #expect(h.peers.updatedPeerIds == [alice.id, news.id])
                #expect(h.peers.updatedInitialPeers[alice.id]! == nil)
                try h.peers.beforeCommit()
                #expect(try h.raw(PeerTable.descriptor, .peerId(alice.id)) == encodeRoot(alice).makeArray())
            }
            h.resetChanges()
            #expect(h.peers.updatedPeerIds.isEmpty)
            try h.transaction { () throws in
                let renamed = TestUser(id: alice.id, firstName: "Alicia", lastName: "A", username: "alice")
                try h.peers.set(renamed)
                try h.peers.set(TestUser(id: alice.id, firstName: "Ali", lastName: "A", username: nil))
                try h.peers.set(bob)
                // The initial value is the one before the transaction's first set.
                #expect(h.peers.updatedInitialPeers[alice.id]! as? TestUser == alice)
                #expect(h.peers.updatedInitialPeers[bob.id]! == nil)
                let updated = try h.peers.updatedPeers()
                #expect(updated.count == 2)
                #expect(updated[alice.id] as? TestUser == TestUser(id: alice.id, firstName: "Ali", lastName: "A", username: nil))
            }
            h.resetChanges()
            try h.reopen()
            try h.transaction { () throws in
                #expect(try h.peers.get(alice.id) as? TestUser == TestUser(id: alice.id, firstName: "Ali", lastName: "A", username: nil))
                #expect(try h.peers.get(bob.id) as? TestUser == bob)
                #expect(try h.peers.get(news.id) as? TestChannel == news)
                #expect(try h.peers.get(peer(1, 5)) == nil)
            }
        }
    }

    @Test func abortLeavesNothingAndExternalCommitsAreSeenAfterClear() throws {
        try withHarness("peers-abort") { h in
            h.clearsCachesOnExternalCommits = false
            try h.transaction { try h.peers.set(alice) }
            try h.abortedTransaction { () throws in
                try h.peers.set(bob)
                try h.peers.set(TestUser(id: alice.id, firstName: "X", lastName: "", username: nil))
            }
            #expect(h.peers.updatedPeerIds.isEmpty)
            try h.transaction { () throws in
                #expect(try h.peers.get(bob.id) == nil)
                #expect(try h.peers.get(alice.id) as? TestUser == alice)
            }
            let other = try TableHarness(path: h.path)
            defer { other.close() }
            try other.transaction { () throws in
                try other.peers.set(bob)
                try other.peers.set(TestUser(id: alice.id, firstName: "Changed", lastName: "", username: nil))
            }
            try h.transaction { () throws in
                // Cached (including the negative entry for bob) until cleared.
                #expect(try h.peers.get(bob.id) == nil)
                h.peers.clearMemoryCache()
                #expect(try h.peers.get(bob.id) as? TestUser == bob)
                #expect(try h.peers.get(alice.id) as? TestUser == TestUser(id: alice.id, firstName: "Changed", lastName: "", username: nil))
            }
        }
    }

    @Test func withoutCachesNothingIsKeptAfterTheFlush() throws {
        try withHarness("peers-nocache", useCaches: false) { h in
            h.clearsCachesOnExternalCommits = false
            try h.transaction { () throws in
                try h.peers.set(alice)
                #expect(try h.peers.get(alice.id) as? TestUser == alice)
            }
            let other = try TableHarness(path: h.path)
            defer { other.close() }
            try other.transaction { try other.peers.set(TestUser(id: alice.id, firstName: "New", lastName: "", username: nil)) }
            try h.transaction { () throws in
                #expect(try h.peers.get(alice.id) as? TestUser == TestUser(id: alice.id, firstName: "New", lastName: "", username: nil))
            }
        }
    }

    @Test func undecodablePeerThrows() throws {
        try withHarness("peers-bad") { h in
            try h.transaction { () throws in
                // A registered type that is not a Peer.
                try h.valueBox.set(PeerTable.descriptor, key: .peerId(alice.id), value: encodeRoot(TestPresence(lastSeen: 1)))
                try h.valueBox.set(PeerTable.descriptor, key: .peerId(bob.id), value: MemoryBuffer([0xff, 0xff]))
            }
            try h.transaction { () throws in
                #expect(throws: PostboxDecodingError.self) { try h.peers.get(alice.id) }
                #expect(throws: PostboxDecodingError.self) { try h.peers.get(bob.id) }
            }
        }
    }
}

@Suite struct PeerStateTablesTests {
    let p1 = peer(0, 10)
    let p2 = peer(2, -7)

    @Test func chatStatesAreCodableEntriesWrittenBack() throws {
        try withHarness("chatstate") { h in
            let state = try CodableEntry(TestChannelState(pts: 1500, invalidatedPts: nil))
            try h.transaction { () throws in
                try h.chatStates.set(p1, state: state)
                #expect(try h.chatStates.get(p1) == state)
                #expect(try h.chatStates.get(p2) == nil)
                #expect(try h.raw(PeerChatStateTable.descriptor, .peerId(p1)) == nil)
                #expect(h.chatStates.updatedPeerIds == [p1])
            }
            // The value is the entry's own bytes.
            #expect(try h.raw(PeerChatStateTable.descriptor, .peerId(p1)) == state.data)
            h.resetChanges()
            #expect(h.chatStates.updatedPeerIds.isEmpty)
            try h.abortedTransaction { try h.chatStates.set(p2, state: state) }
            try h.reopen()
            try h.transaction { () throws in
                #expect(try h.chatStates.get(p1)?.get(TestChannelState.self) == TestChannelState(pts: 1500, invalidatedPts: nil))
                #expect(try h.chatStates.get(p2) == nil)
                try h.chatStates.set(p1, state: nil)
            }
            try h.reopen()
            try h.transaction { () throws in #expect(try h.chatStates.get(p1) == nil) }
        }
    }

    @Test func cachedDataPresenceAndNotificationSettings() throws {
        try withHarness("peerdata") { h in
            let data = TestCachedData(about: "about", pinnedMessageId: MessageId(peerId: p1, namespace: 0, id: 9), memberIds: [p2])
            try h.transaction { () throws in
                try h.cachedData.set(p1, data: data)
                try h.presences.set(p1, presence: TestPresence(lastSeen: 100))
                try h.presences.set(p1, presence: TestPresence(lastSeen: 101))
                try h.notificationSettings.set(p1, settings: TestNotificationSettings(muteUntil: 5))
                #expect(try h.cachedData.get(p1) as? TestCachedData == data)
                #expect(try h.presences.get(p1) as? TestPresence == TestPresence(lastSeen: 101))
                #expect(try h.notificationSettings.get(p1) as? TestNotificationSettings == TestNotificationSettings(muteUntil: 5))
                for table in [CachedPeerDataTable.descriptor, PeerPresenceTable.descriptor, PeerNotificationSettingsTable.descriptor] {
                    #expect(try h.raw(table, .peerId(p1)) == nil)
                }
                #expect(h.cachedData.updatedCachedPeerData[p1] as? TestCachedData == data)
                #expect(h.presences.updatedPresences.count == 1)
                #expect(h.presences.updatedPresences[p1] as? TestPresence == TestPresence(lastSeen: 101))
                #expect(h.notificationSettings.updatedSettings[p1]?.old == nil)
                #expect(h.notificationSettings.updatedSettings[p1]?.new as? TestNotificationSettings == TestNotificationSettings(muteUntil: 5))
            }
            #expect(try h.raw(PeerPresenceTable.descriptor, .peerId(p1)) == encodeRoot(TestPresence(lastSeen: 101)).makeArray())
            h.resetChanges()
            #expect(h.cachedData.updatedPeerIds.isEmpty && h.presences.updatedPeerIds.isEmpty && h.notificationSettings.updatedPeerIds.isEmpty)
            try h.transaction { () throws in
                try h.notificationSettings.set(p1, settings: TestNotificationSettings(muteUntil: nil))
                try h.notificationSettings.set(p1, settings: TestNotificationSettings(muteUntil: 7))
                let update = h.notificationSettings.updatedSettings[p1]
                #expect(update?.old as? TestNotificationSettings == TestNotificationSettings(muteUntil: 5))
                #expect(update?.new as? TestNotificationSettings == TestNotificationSettings(muteUntil: 7))
            }
            h.resetChanges()
            try h.abortedTransaction { () throws in
                try h.cachedData.set(p2, data: data)
                try h.presences.set(p1, presence: TestPresence(lastSeen: 999))
                try h.notificationSettings.set(p2, settings: TestNotificationSettings(muteUntil: 1))
            }
            try h.reopen()
            try h.transaction { () throws in
                #expect(try h.cachedData.get(p1) as? TestCachedData == data)
                #expect(try h.cachedData.get(p2) == nil)
                #expect(try h.presences.get(p1) as? TestPresence == TestPresence(lastSeen: 101))
                #expect(try h.notificationSettings.get(p1) as? TestNotificationSettings == TestNotificationSettings(muteUntil: 7))
                #expect(try h.notificationSettings.get(p2) == nil)
            }
        }
    }

    /// With caches, another value box's commits are seen once the caches are cleared; with `useCaches: false`
    /// nothing outlives the flush, so they are seen at once.
    @Test func externalCommitsAreSeenAfterClearingCaches() throws {
        for useCaches in [true, false] {
            try withHarness("peerdata-ext", useCaches: useCaches) { h in
                h.clearsCachesOnExternalCommits = false
                try h.transaction { () throws in
                    try h.presences.set(p1, presence: TestPresence(lastSeen: 1))
                    try h.cachedData.set(p1, data: TestCachedData(about: "a", pinnedMessageId: nil, memberIds: []))
                    try h.notificationSettings.set(p1, settings: TestNotificationSettings(muteUntil: 1))
                    try h.chatStates.set(p1, state: try CodableEntry(TestChannelState(pts: 1, invalidatedPts: nil)))
                    try h.contacts.replace([p1])
                    try h.preferences.set(ValueBoxKey("k"), entry: TestPreferences(autoDownload: true, limits: [1]))
                    #expect(try h.presences.get(p2) == nil)
                }
                let other = try TableHarness(path: h.path)
                defer { other.close() }
                try other.transaction { () throws in
                    try other.presences.set(p1, presence: TestPresence(lastSeen: 2))
                    try other.presences.set(p2, presence: TestPresence(lastSeen: 3))
                    try other.cachedData.set(p1, data: TestCachedData(about: "b", pinnedMessageId: nil, memberIds: []))
                    try other.notificationSettings.set(p1, settings: TestNotificationSettings(muteUntil: 2))
                    try other.chatStates.set(p1, state: try CodableEntry(TestChannelState(pts: 2, invalidatedPts: 1)))
                    try other.contacts.replace([p2])
                    try other.preferences.set(ValueBoxKey("k"), entry: TestPreferences(autoDownload: false, limits: [2]))
                }
                try h.transaction { () throws in
                    if useCaches {
                        #expect(try h.presences.get(p1) as? TestPresence == TestPresence(lastSeen: 1))
                        #expect(try h.contacts.get() == [p1])
                        h.clearMemoryCaches()
                    }
                    #expect(try h.presences.get(p1) as? TestPresence == TestPresence(lastSeen: 2))
                    #expect(try h.presences.get(p2) as? TestPresence == TestPresence(lastSeen: 3))
                    #expect(try (h.cachedData.get(p1) as? TestCachedData)?.about == "b")
                    #expect(try h.notificationSettings.get(p1) as? TestNotificationSettings == TestNotificationSettings(muteUntil: 2))
                    #expect(try h.chatStates.get(p1)?.get(TestChannelState.self) == TestChannelState(pts: 2, invalidatedPts: 1))
                    #expect(try h.contacts.get() == [p2])
                    #expect(try h.preferences.get(ValueBoxKey("k")) as? TestPreferences == TestPreferences(autoDownload: false, limits: [2]))
                }
            }
        }
    }
}

@Suite struct ContactTableTests {
    @Test func replaceAppliesTheDifference() throws {
        try withHarness("contacts") { h in
            let a = peer(0, 1), b = peer(0, 2), c = peer(0, 3), d = peer(1, -4)
            try h.transaction { () throws in
                #expect(try h.contacts.get().isEmpty)
                try h.contacts.replace([a, b, c])
                #expect(try h.contacts.get() == [a, b, c])
                #expect(try h.contacts.isContact(b))
                #expect(try h.valueBox.count(ContactTable.descriptor) == 0)
                #expect(h.contacts.replacedPeerIds == [a, b, c])
            }
            h.resetChanges()
            #expect(h.contacts.replacedPeerIds == nil)
            // Keys are the 8-byte big-endian packed ids; values are empty.
            var stored: [PeerId] = []
            try h.valueBox.scan(ContactTable.descriptor, values: { key, value in
                #expect(key.length == 8 && value.length == 0)
                stored.append(PeerId(key.getInt64(0)))
                return true
            })
            #expect(Set(stored) == [a, b, c])
            try h.transaction { () throws in
                try h.contacts.replace([a])
                try h.contacts.replace([a, d])
                #expect(h.contacts.replacedPeerIds == [a, d])
            }
            h.resetChanges()
            try h.abortedTransaction { try h.contacts.replace([]) }
            try h.reopen()
            try h.transaction { () throws in #expect(try h.contacts.get() == [a, d]) }
            #expect(try h.valueBox.count(ContactTable.descriptor) == 2)
            // Another value box changes the list; the cached set is refreshed by clearMemoryCache.
            h.clearsCachesOnExternalCommits = false
            let other = try TableHarness(path: h.path)
            defer { other.close() }
            try other.transaction { try other.contacts.replace([b]) }
            try h.transaction { () throws in
                #expect(try h.contacts.get() == [a, d])
                h.contacts.clearMemoryCache()
                #expect(try h.contacts.get() == [b])
            }
        }
    }
}
