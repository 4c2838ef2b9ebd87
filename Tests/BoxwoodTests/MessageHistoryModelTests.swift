import Foundation
import Testing
@testable import Boxwood
import BoxwoodStore

/// A plain model of what the history tables store: messages by id, id counters, global and globally-unique id maps.
private struct HistoryModel {
    struct Message {
        var id: MessageId
        var timestamp: Int32
        var flags: MessageFlags
        var tags: MessageTags
        var text: String
        var unique: Int64?
        var stableId: UInt32?
        var version: UInt32
        var index: MessageIndex { MessageIndex(id: id, timestamp: timestamp) }
    }

    struct CounterKey: Hashable {
        let peerId: PeerId
        let namespace: MessageId.Namespace
    }

    struct UniqueKey: Hashable {
        let peerId: PeerId
        let unique: Int64
    }

    var messages: [MessageId: Message] = [:]
    var next: [CounterKey: Int32] = [:]
    var global: [Int32: MessageId] = [:]
    var unique: [UniqueKey: MessageId] = [:]

    static let globalNamespaces: Set<GlobalMessageIdsNamespace> = [GlobalMessageIdsNamespace(peerIdNamespace: PeerId.Namespace(0), messageIdNamespace: 0)]

    mutating func store(_ message: Message) {
        messages[message.id] = message
        if Self.globalNamespaces.contains(GlobalMessageIdsNamespace(peerIdNamespace: message.id.peerId.namespace, messageIdNamespace: message.id.namespace)) {
            global[message.id.id] = message.id
        }
        if let u = message.unique { unique[UniqueKey(peerId: message.id.peerId, unique: u)] = message.id }
    }

    mutating func unstore(_ id: MessageId) {
        guard let message = messages.removeValue(forKey: id) else { return }
        if global[id.id] == id { global[id.id] = nil }
        if let u = message.unique, unique[UniqueKey(peerId: id.peerId, unique: u)] == id { unique[UniqueKey(peerId: id.peerId, unique: u)] = nil }
    }

    mutating func assign(_ peerId: PeerId, _ namespace: MessageId.Namespace) -> MessageId {
        let key = CounterKey(peerId: peerId, namespace: namespace)
        var id = next[key] ?? 1
        let top = messages.keys.filter { $0.peerId == peerId && $0.namespace == namespace && $0.id >= 0 }.map(\.id).max()
        if let top, top >= id { id = top + 1 }
        next[key] = id + 1
        return MessageId(peerId: peerId, namespace: namespace, id: id)
    }

    func sorted(_ peerId: PeerId, namespaces: Set<MessageId.Namespace>? = nil, tag: MessageTags? = nil) -> [MessageIndex] {
        messages.values.filter { m in
            m.id.peerId == peerId && (namespaces?.contains(m.id.namespace) ?? true) && (tag.map { !m.tags.intersection($0).isEmpty } ?? true)
        }.map(\.index).sorted()
    }
}

@Suite struct MessageHistoryModelTests {
    static let words = ["alpha", "alphabet", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "kappa"]
    static let peers = [peer(1, namespace: 0), peer(2, namespace: 1), peer(3, namespace: 2)]

    private static func randomText(_ rng: inout SplitMix64) -> String {
        if rng.below(4) == 0 { return "" }
        return (0..<(1 + rng.below(3))).map { _ in words[rng.below(words.count)] }.joined(separator: rng.below(2) == 0 ? " " : ", ")
    }

    private static func randomTags(_ rng: inout SplitMix64) -> MessageTags {
        MessageTags(rawValue: UInt32(rng.below(8)))
    }

    /// Reads everything the model predicts and compares.
    private func check(_ t: MessageHistoryTables, _ model: inout HistoryModel, _ rng: inout SplitMix64, seed: UInt64,
                       fillStableIds: Bool) throws {
        let h = t.history
        for peerId in Self.peers {
            let all = model.sorted(peerId)
            #expect(try h.indices(peerId: peerId, anchor: nil, direction: .later, limit: 0) == all, "seed \(seed) \(peerId) ascending")
            #expect(try h.indices(peerId: peerId, anchor: nil, direction: .earlier, limit: 0) == all.reversed(), "seed \(seed) \(peerId) descending")
            for _ in 0..<6 {
                let anchor: MessageIndex?
                switch rng.below(3) {
                case 0: anchor = all.isEmpty ? nil : all[rng.below(all.count)]
                case 1: anchor = MessageIndex(id: MessageId(peerId: peerId, namespace: MessageId.Namespace(Int32(rng.below(3))), id: rng.int32(in: 0...320)), timestamp: rng.int32(in: 0...60))
                default: anchor = nil
                }
                let limit = 1 + rng.below(6)
                let namespaces: Set<MessageId.Namespace>? = rng.below(3) == 0 ? [MessageId.Namespace(Int32(rng.below(3)))] : nil
                let scoped = model.sorted(peerId, namespaces: namespaces)
                let earlier = Array(scoped.filter { anchor == nil || $0 < anchor! }.reversed().prefix(limit))
                let later = Array(scoped.filter { anchor == nil || $0 > anchor! }.prefix(limit))
                #expect(try h.indices(peerId: peerId, namespaces: namespaces, anchor: anchor, direction: .earlier, limit: limit) == earlier,
                        "seed \(seed) earlier \(peerId) \(String(describing: anchor)) \(limit)")
                #expect(try h.indices(peerId: peerId, namespaces: namespaces, anchor: anchor, direction: .later, limit: limit) == later,
                        "seed \(seed) later \(peerId) \(String(describing: anchor)) \(limit)")
                let messages = try h.messages(peerId: peerId, namespaces: namespaces, anchor: anchor, direction: .later, limit: limit)
                #expect(messages.map(\.index) == later, "seed \(seed) later messages")
                // Tags: one bit or several.
                let tag = [MessageTags(rawValue: 1), MessageTags(rawValue: 2), MessageTags(rawValue: 4), MessageTags(rawValue: 5)][rng.below(4)]
                let tagged = model.sorted(peerId, namespaces: namespaces, tag: tag)
                #expect(try h.tagIndices(peerId: peerId, tag: tag, namespaces: namespaces, anchor: anchor, direction: .earlier, limit: limit)
                        == Array(tagged.filter { anchor == nil || $0 < anchor! }.reversed().prefix(limit)), "seed \(seed) tag earlier")
                #expect(try h.tagIndices(peerId: peerId, tag: tag, namespaces: namespaces, anchor: anchor, direction: .later, limit: limit)
                        == Array(tagged.filter { anchor == nil || $0 > anchor! }.prefix(limit)), "seed \(seed) tag later")
            }
            for namespace in (Int32(0)...2).map({ MessageId.Namespace($0) }) {
                #expect(try h.topIndex(peerId: peerId, namespace: namespace) == model.sorted(peerId, namespaces: [namespace]).last, "seed \(seed) top")
            }
            #expect(try h.topIndex(peerId: peerId, namespaces: nil) == all.last)
            // Text search in this peer, optionally by tag.
            let word = Self.words[rng.below(Self.words.count)]
            let tag: MessageTags? = rng.below(2) == 0 ? MessageTags(rawValue: 1 << UInt32(rng.below(3))) : nil
            let expected = Set(model.messages.values.filter { m in
                m.id.peerId == peerId && (tag.map { m.tags.contains($0) } ?? true)
                    && m.text.split(whereSeparator: { $0 == " " || $0 == "," }).contains { $0.hasPrefix(word) }
            }.map(\.id))
            #expect(Set(try t.textIndex.search(word, peerId: peerId, tags: tag)) == expected, "seed \(seed) search \(word) \(peerId)")
        }
        // Search across peers.
        let word = Self.words[rng.below(Self.words.count)]
        let expected = Set(model.messages.values.filter { m in
            m.text.split(whereSeparator: { $0 == " " || $0 == "," }).contains { $0.hasPrefix(word) }
        }.map(\.id))
        #expect(Set(try t.textIndex.search(word, peerId: nil, tags: nil)) == expected, "seed \(seed) global search \(word)")
        #expect(try h.search(word, peerId: nil, tags: nil) == model.messages.values.filter { expected.contains($0.id) }.map(\.index).sorted(by: >),
                "seed \(seed) global search indices \(word)")
        // Messages by id.
        for (id, m) in model.messages {
            guard let stored = try h.getMessage(id) else {
                Issue.record("seed \(seed): \(id) missing")
                continue
            }
            #expect(stored.timestamp == m.timestamp && stored.tags == m.tags && stored.text == m.text && stored.flags == m.flags
                    && stored.globallyUniqueId == m.unique && stored.stableVersion == m.version, "seed \(seed) message \(id)")
            if let stableId = m.stableId {
                #expect(stored.stableId == stableId, "seed \(seed) stable id of \(id)")
            } else if fillStableIds {
                model.messages[id]?.stableId = stored.stableId
            }
            #expect(try h.messageIndex(of: id) == m.index)
        }
        for _ in 0..<5 {
            let id = MessageId(peerId: Self.peers[rng.below(3)], namespace: MessageId.Namespace(Int32(rng.below(3))), id: rng.int32(in: 0...320))
            if model.messages[id] == nil { #expect(try h.getMessage(id) == nil, "seed \(seed) absent \(id)") }
        }
        // Global and globally unique ids.
        for (globalId, id) in model.global { #expect(try h.messageId(globalId: globalId) == id, "seed \(seed) global \(globalId)") }
        for _ in 0..<5 {
            let globalId = rng.int32(in: 0...320)
            #expect(try h.messageId(globalId: globalId) == model.global[globalId], "seed \(seed) global \(globalId)")
        }
        for (key, id) in model.unique { #expect(try h.messageId(peerId: key.peerId, globallyUniqueId: key.unique) == id) }
    }

    @Test func randomizedAgainstModel() throws {
        let seed = testSeed("MessageHistoryModelTests.randomizedAgainstModel")
        var rng = SplitMix64(seed: seed)
        var configuration = MessageHistoryConfiguration()
        configuration.globalMessageIdsNamespaces = HistoryModel.globalNamespaces
        let f = try HistoryFixture("history-model", configuration: configuration)
        var model = HistoryModel()
        var nextUnique: Int64 = 1000
        let start = Date()

        func randomMessage(_ peerId: PeerId, _ rng: inout SplitMix64) -> StoreMessage {
            let partial = rng.below(4) == 0
            let id: StoreMessageId = partial ? .partial(peerId, 2) : .id(MessageId(peerId: peerId, namespace: MessageId.Namespace(Int32(rng.below(2))), id: rng.int32(in: 1...300)))
            var unique: Int64?
            if rng.below(3) == 0 {
                unique = nextUnique
                nextUnique += 1
            }
            return StoreMessage(id: id, globallyUniqueId: unique, timestamp: rng.int32(in: 0...60),
                                flags: rng.below(2) == 0 ? [.incoming] : [], tags: Self.randomTags(&rng),
                                authorId: nil, text: Self.randomText(&rng))
        }

        for round in 0..<200 {
            var working = model
            let abort = rng.below(7) == 0
            let body: (MessageHistoryTables) throws -> Void = { t in
                for _ in 0..<(1 + rng.below(5)) {
                    let peerId = Self.peers[rng.below(Self.peers.count)]
                    switch rng.below(10) {
                    case 0...4:
                        let batch = (0..<(1 + rng.below(4))).map { _ in randomMessage(peerId, &rng) }
                        let result = try t.history.addMessages(batch, location: .random)
                        var expected: [Int64: MessageId] = [:]
                        for message in batch {
                            let id: MessageId
                            switch message.id {
                            case let .id(explicit):
                                if working.messages[explicit] != nil { continue }
                                id = explicit
                            case let .partial(p, ns):
                                id = working.assign(p, ns)
                            }
                            working.store(HistoryModel.Message(id: id, timestamp: message.timestamp, flags: message.flags, tags: message.tags,
                                                               text: message.text, unique: message.globallyUniqueId, stableId: nil, version: 0))
                            if let u = message.globallyUniqueId { expected[u] = id }
                        }
                        #expect(result.idsByGloballyUniqueId == expected, "seed \(seed) add result")
                    case 5, 6:
                        var ids = working.messages.keys.filter { $0.peerId == peerId }.shuffled(using: &rng).prefix(rng.below(4)).map { $0 }
                        ids.append(MessageId(peerId: peerId, namespace: 0, id: rng.int32(in: 1...300)))
                        try t.history.deleteMessages(ids)
                        for id in ids { working.unstore(id) }
                    case 7, 8:
                        guard let old = working.messages.values.filter({ $0.id.peerId == peerId }).randomElement(using: &rng) else { continue }
                        var newId = old.id
                        var storeId: StoreMessageId = .id(old.id)
                        if rng.below(3) == 0 {
                            if rng.below(2) == 0 {
                                newId = MessageId(peerId: peerId, namespace: MessageId.Namespace(Int32(rng.below(2))), id: rng.int32(in: 1...300))
                                storeId = .id(newId)
                            } else {
                                storeId = .partial(peerId, 2)
                            }
                        }
                        var unique = old.unique
                        if rng.below(3) == 0 {
                            unique = nextUnique
                            nextUnique += 1
                        }
                        let message = StoreMessage(id: storeId, globallyUniqueId: unique, timestamp: rng.below(2) == 0 ? old.timestamp : rng.int32(in: 0...60),
                                                   flags: old.flags, tags: rng.below(2) == 0 ? old.tags : Self.randomTags(&rng),
                                                   authorId: nil, text: rng.below(2) == 0 ? old.text : Self.randomText(&rng))
                        try t.history.updateMessage(old.id, message)
                        if case .partial = storeId { newId = old.id.namespace == 2 ? old.id : working.assign(peerId, 2) }
                        if newId != old.id, working.messages[newId] != nil { working.unstore(newId) }
                        working.unstore(old.id)
                        working.store(HistoryModel.Message(id: newId, timestamp: message.timestamp, flags: message.flags, tags: message.tags,
                                                           text: message.text, unique: unique, stableId: old.stableId, version: old.version + 1))
                    default:
                        guard let old = working.messages.values.filter({ $0.id.peerId == peerId }).randomElement(using: &rng) else { continue }
                        let timestamp = rng.int32(in: 0...60)
                        try t.history.updateMessageTimestamp(old.id, timestamp: timestamp)
                        working.messages[old.id]?.timestamp = timestamp
                    }
                }
                if rng.below(3) == 0 { try check(t, &working, &rng, seed: seed, fillStableIds: false) }
            }
            if abort {
                try f.abortedTransaction(body)
            } else {
                try f.transaction(body)
                model = working
            }
            if round % 50 == 49 { try f.reopen() }
            if round % 3 == 0 || abort {
                try f.read { t in try check(t, &model, &rng, seed: seed, fillStableIds: true) }
            }
        }
        try f.read { t in try check(t, &model, &rng, seed: seed, fillStableIds: true) }
        print("MessageHistoryModelTests.randomizedAgainstModel: \(model.messages.count) messages, \(String(format: "%.2f", Date().timeIntervalSince(start))) s")
    }

    /// The operations of a transaction describe what it did.
    @Test func operationsAreRecorded() throws {
        let f = try HistoryFixture("history-ops")
        let p = peer(1)
        let a = MessageId(peerId: p, namespace: 0, id: 10)
        let b = MessageId(peerId: p, namespace: 0, id: 11)
        try f.transaction { t in
            try t.history.addMessages([storeMessage(a, timestamp: 100, tags: MessageTags(rawValue: 1)), storeMessage(b, timestamp: 101)], location: .random)
        }
        var ops = f.lastChanges.operationsByPeerId[p] ?? []
        #expect(ops.count == 2)
        if case let .insertMessage(m) = ops[0] { #expect(m.id == a && m.stableId == 1) } else { Issue.record("expected an insert") }
        if case let .insertMessage(m) = ops[1] { #expect(m.id == b && m.stableId == 2) } else { Issue.record("expected an insert") }
        try f.transaction { t in
            try t.history.updateMessageTimestamp(a, timestamp: 200)
            try t.history.deleteMessages([b, MessageId(peerId: p, namespace: 0, id: 99)])
        }
        ops = f.lastChanges.operationsByPeerId[p] ?? []
        #expect(ops.count == 2)
        if case let .updateTimestamp(index, timestamp) = ops[0] { #expect(index == MessageIndex(id: a, timestamp: 100) && timestamp == 200) } else { Issue.record("expected updateTimestamp") }
        if case let .remove(entries) = ops[1] { #expect(entries.map(\.0) == [MessageIndex(id: b, timestamp: 101)]) } else { Issue.record("expected remove") }
        try f.transaction { t in
            try t.history.updateMessage(a, storeMessage(MessageId(peerId: p, namespace: 1, id: 5), timestamp: 300, tags: MessageTags(rawValue: 2), text: "moved"))
            #expect(try t.history.getMessage(a) == nil)
            let moved = try t.history.getMessage(MessageId(peerId: p, namespace: 1, id: 5))
            #expect(moved?.stableId == 1 && moved?.stableVersion == 1 && moved?.text == "moved")
            #expect(try t.history.tagIndices(peerId: p, tag: MessageTags(rawValue: 1), anchor: nil, direction: .later, limit: 0) == [])
            #expect(try t.textIndex.search("mov", peerId: p, tags: MessageTags(rawValue: 2)) == [MessageId(peerId: p, namespace: 1, id: 5)])
        }
        ops = f.lastChanges.operationsByPeerId[p] ?? []
        #expect(ops.count == 2)
        if case let .remove(entries) = ops[0] { #expect(entries.first?.0 == MessageIndex(id: a, timestamp: 200) && entries.first?.1 == MessageTags(rawValue: 1)) } else { Issue.record("expected remove") }
        if case let .insertMessage(m) = ops[1] { #expect(m.id.namespace == 1) } else { Issue.record("expected insert") }
        // Updating a missing message throws instead of trapping.
        #expect(throws: HistoryTableError.self) {
            try f.transaction { t in try t.history.updateMessage(b, storeMessage(b, timestamp: 1)) }
        }
    }

    /// Bad stored bytes are reported as errors.
    @Test func corruptValuesThrow() throws {
        let f = try HistoryFixture("history-corrupt")
        let p = peer(1)
        let id = MessageId(peerId: p, namespace: 0, id: 1)
        try f.transaction { t in try t.history.addMessages([storeMessage(id, timestamp: 5, text: "hello")], location: .random) }
        try f.transaction { t in
            var key = ValueBoxKey(length: 16)
            key.setInt64(0, value: p.toInt64())
            key.setInt32(8, value: 0)
            key.setInt32(12, value: 1)
            try t.valueBoxForTests.set(ValueBoxTable(id: 4, keyType: .binary), key: key, bytes: [1, 2])
        }
        #expect(throws: HistoryTableError.self) { try f.read { t in try t.history.getMessage(id) } }
        try f.transaction { t in
            var key = ValueBoxKey(length: 20)
            key.setInt64(0, value: p.toInt64())
            key.setInt32(8, value: 0)
            key.setInt32(12, value: 5)
            key.setInt32(16, value: 1)
            try t.valueBoxForTests.set(ValueBoxTable(id: 7, keyType: .binary), key: key, bytes: [0xff, 0xff, 0xff])
        }
        #expect(throws: HistoryTableError.self) {
            try f.read { t in try t.history.messages(peerId: p, anchor: nil, direction: .later, limit: 0) }
        }
    }
}

extension MessageHistoryTables {
    var valueBoxForTests: ValueBox { valueBox }
}

/// Random bytes written over every history table's keys and values: every read and write either works or throws,
/// none traps.
@Suite struct HistoryGarbageTests {
    @Test func garbageNeverTraps() throws {
        let seed = testSeed("HistoryGarbageTests.garbageNeverTraps")
        var rng = SplitMix64(seed: seed)
        var configuration = MessageHistoryConfiguration()
        configuration.messageHoles = [PeerId.Namespace(0): [0: [MessageTags(rawValue: 1)]]]
        configuration.defaultMessageNamespaceReadStates = [0: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)]
        configuration.globalMessageIdsNamespaces = [GlobalMessageIdsNamespace(peerIdNamespace: PeerId.Namespace(0), messageIdNamespace: 0)]
        let p = peer(1)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        for round in 0..<40 {
            let f = try HistoryFixture("garbage-\(round)", configuration: configuration)
            // Some real data first.
            try f.transaction { t in
                try t.history.addMessages((1...5).map { storeMessage(MessageId(peerId: p, namespace: 0, id: Int32($0) * 10), timestamp: Int32($0),
                                                                     flags: [.incoming], tags: MessageTags(rawValue: 1), text: "hello \($0)") },
                                          location: .upperHistoryBlock)
            }
            try f.transaction { t in
                let box = t.valueBoxForTests
                for _ in 0..<6 {
                    let binaryTables: [Int32] = [4, 7, 9, 10, 12, 32, 56]
                    let intTables: [Int32] = [3, 8, 14]
                    if rng.below(3) == 0 {
                        let table = ValueBoxTable(id: intTables[rng.below(intTables.count)], keyType: .int64)
                        let key = rng.below(2) == 0 ? ValueBoxKey(int64: p.toInt64()) : ValueBoxKey(int64: Int64(rng.below(60)))
                        try box.set(table, key: key, bytes: bytes(rng.below(30)))
                    } else {
                        let table = ValueBoxTable(id: binaryTables[rng.below(binaryTables.count)], keyType: .binary)
                        var prefix = ValueBoxKey(length: 8)
                        prefix.setInt64(0, value: p.toInt64())
                        if table.id == 9 {
                            prefix = ValueBoxKey(length: 4)
                        }
                        let key = prefix + ValueBoxKey(bytes(rng.below(24)))
                        try box.set(table, key: key, bytes: bytes(rng.below(30)))
                    }
                }
            }
            f.tables.clearMemoryCache()
            let operations: [(MessageHistoryTables) throws -> Void] = [
                { t in _ = try t.history.getMessage(MessageId(peerId: p, namespace: 0, id: 10)) },
                { t in _ = try t.history.indices(peerId: p, anchor: nil, direction: .earlier, limit: 0) },
                { t in _ = try t.history.messages(peerId: p, anchor: nil, direction: .later, limit: 0) },
                { t in _ = try t.history.tagIndices(peerId: p, tag: MessageTags(rawValue: 1), anchor: nil, direction: .later, limit: 0) },
                { t in _ = try t.history.topIndex(peerId: p, namespaces: nil) },
                { t in _ = try t.history.messageId(globalId: Int32(rng.below(60))) },
                { t in _ = try t.history.search("hello", peerId: p, tags: nil) },
                { t in _ = try t.holes.holes(peerId: p, namespace: 0, space: .everywhere) },
                { t in _ = try t.holes.spaces(peerId: p, namespace: 0) },
                { t in _ = try t.holes.containing(peerId: p, namespace: 0, space: .everywhere, id: Int32(rng.below(100))) },
                { t in try t.holes.addHole(peerId: p, namespace: 0, space: .everywhere, range: 1...1000) },
                { t in try t.holes.removeHole(peerId: p, namespace: 0, space: .everywhere, range: 5...7) },
                { t in _ = try t.readStates.get(p) },
                { t in try t.history.applyIncomingMaxReadId(MessageId(peerId: p, namespace: 0, id: 30)) },
                { t in _ = try t.chatListIndex.get(p) },
                { t in _ = try t.chatList.earlierEntries(groupId: .root, index: nil, count: 0) },
                { t in try t.chatList.setPinnedPeers(groupId: .root, [p]) },
                { t in try t.history.addMessages([storeMessage(MessageId(peerId: p, namespace: 0, id: 1000), timestamp: 1000, flags: [.incoming])], location: .upperHistoryBlock) },
                { t in try t.history.addMessages([StoreMessage(id: .partial(p, 0), timestamp: 5, authorId: nil, text: "x")], location: .random) },
                { t in try t.history.deleteMessages([MessageId(peerId: p, namespace: 0, id: 20)]) },
                { t in try t.history.updateMessage(MessageId(peerId: p, namespace: 0, id: 30), storeMessage(MessageId(peerId: p, namespace: 0, id: 31), timestamp: 9)) },
                { t in try t.history.updateMessageTimestamp(MessageId(peerId: p, namespace: 0, id: 40), timestamp: 99) },
                { t in _ = try t.metadata.totalUnreadState(groupId: .root) },
                { t in _ = try t.recountTotalUnreadState(groupId: .root) },
            ]
            for operation in operations {
                do { try f.transaction(operation) } catch {}
            }
        }
    }
}
