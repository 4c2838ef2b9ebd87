import Foundation
import Testing
import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files sent as resumable chunked uploads, and forwards: exactly once, under faults and across a SIGKILL, with the
/// failure model (a refused forward, a file that cannot be read) and the server's rules on parts.
@Suite("Uploads and forwards", .timeLimit(.minutes(3)))
struct UploadAndForwardTests {
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = TestRandom(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Waits until `condition` holds (at most `limit`).
    static func eventually(_ limit: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return try await condition()
    }

    static func messages(_ server: SimulatedServer, text: String) -> [ApiMessage] {
        server.messagesSent().filter { $0.text == text }
    }

    @Test("a file is uploaded in parts under faults, sent once, and stored as the server's document")
    func uploadUnderFaults() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 51, users: 3, groups: 1, channels: 1, secretChats: 0,
                                                                                 initialHistory: 3...6, faults: .realistic))
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        let content = Self.bytes(10_500, seed: 1)
        try Self.write(content, to: directory.path + "/report.pdf")
        let chats = server.snapshot().chatStates.keys.sorted()
        let user = try #require(chats.first { $0.namespace == SyncNamespaces.user })
        let channel = try #require(chats.first { $0.namespace == SyncNamespaces.channel })
        var localIds: [MessageId] = []
        for (peerId, caption) in [(user, "the report"), (channel, "the report, posted")] {
            localIds.append(try await client.outbound.sendMedia(peerId: peerId, file: SyncOutgoingFile(path: directory.path + "/report.pdf", fileName: "report.pdf",
                                                                                                      mimeType: "application/pdf"),
                                                                caption: caption, timestamp: 1_000))
        }
        #expect(await Self.eventually { Self.messages(server, text: "the report, posted").count == 1 })
        await SyncSimulation.quiesce(client: client, server: server)

        for caption in ["the report", "the report, posted"] {
            let sent = Self.messages(server, text: caption)
            #expect(sent.count == 1, "\(caption) sent \(sent.count) times")
            guard let message = sent.first, case let .document(document)? = message.content.media else {
                Issue.record("\(caption): no document on the server")
                continue
            }
            #expect(document.fileName == "report.pdf" && document.mimeType == "application/pdf" && document.size == 10_500)
            #expect(server.uploadedFile(document.id) == content, "the server's file differs from the one sent")
            #expect(server.partsReceived(document.id).keys.sorted() == Array(0..<11))
            let stored = try await client.postbox.transaction { transaction in
                try transaction.getMessage(MessageId(peerId: message.peerId, namespace: SyncNamespaces.cloudMessages, id: message.id))
            }
            let file = stored?.media.first as? SyncMediaFile
            #expect(file?.fileId == document.id && file?.fileName == "report.pdf", "\(caption): the local copy is \(String(describing: stored?.media))")
        }
        for localId in localIds {
            #expect(try await client.postbox.transaction { try $0.getMessage(localId) } == nil, "the local copy \(localId) stayed")
        }
        #expect(await client.outbound.uploadsInProgress.isEmpty)
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")
        try await client.stop()
    }

    @Test("forwards are sent once and stored with their origin; a refused forward leaves failed copies that carry the forward to resend")
    func forwards() async throws {
        var configuration = SimulatedServerConfiguration(seed: 52, users: 3, groups: 1, channels: 2, secretChats: 0, initialHistory: 4...8,
                                                         faults: .realistic)
        configuration.readOnlyChannels = 1
        let server = SimulatedServer(configuration: configuration)
        let directory = SyncTemporaryDirectory()
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        try await client.start()
        await client.waitUntilQuiet()
        let snapshot = server.snapshot()
        let group = try #require(snapshot.chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.group })
        let user = try #require(snapshot.chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.user })
        let readOnly = try #require(snapshot.chatStates.keys.filter { $0.namespace == SyncNamespaces.channel }.sorted().last)
        // Only the newest message of each chat is stored after the first sync: a view of the group fills its history.
        let view = client.postbox.view(.messageHistory(peerId: group, namespace: SyncNamespaces.cloudMessages, count: 10))
        let viewing = Task { for try await _ in view {} }
        defer { viewing.cancel() }
        #expect(try await Self.eventually {
            try await SyncInspector.read(client.postbox, peerIds: [group]).chats[group]?.messages.count ?? 0 >= 2
        })
        let stored = try await SyncInspector.read(client.postbox, peerIds: [group]).chats[group]?.messages.keys.sorted(by: >) ?? []
        let sources = stored.prefix(2).map { MessageId(peerId: group, namespace: SyncNamespaces.cloudMessages, id: $0) }
        try #require(sources.count == 2)
        let originals = sources.compactMap { snapshot.chatStates[group]?.messages[$0.id] }
        let events = client.manager.events
        _ = try await client.outbound.forwardMessages(sources, to: user, timestamp: 2_000)
        let refused = try await client.outbound.forwardMessages([sources[0]], to: readOnly, timestamp: 2_001)
        await #expect(throws: OutboundError.self) {
            try await client.outbound.forwardMessages([MessageId(peerId: group, namespace: SyncNamespaces.cloudMessages, id: 999_999)], to: user, timestamp: 1)
        }

        #expect(await Self.eventually { server.messagesSent().filter { $0.peerId == user && $0.content.forward != nil }.count == 2 })
        await SyncSimulation.quiesce(client: client, server: server)
        let copies = server.messagesSent().filter { $0.peerId == user && $0.content.forward != nil }
        #expect(copies.count == 2, "forwarded \(copies.count) times")
        #expect(Set(copies.map(\.text)) == Set(originals.map(\.text)))
        for copy in copies {
            guard let original = originals.first(where: { $0.text == copy.text }) else { continue }
            #expect(copy.content == original.content.forwardedCopy(from: group, id: original.id, authorId: original.fromId, date: original.date))
        }
        let report = try await ConsistencyCheck.check(client.postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")

        // The forward to the read-only channel: refused, reported, the copy failed with the forward to resend.
        var failure: OutboundFailure?
        for await event in events {
            if case let .outboundFailed(reported) = event { failure = reported; break }
        }
        #expect(failure?.reason == "CHAT_WRITE_FORBIDDEN" && failure?.messageIds == refused)
        let failed = try await client.postbox.transaction { try $0.getMessage(refused[0]) }
        let attribute = failed?.attributes.lazy.compactMap { $0 as? SyncSendFailureAttribute }.first
        #expect(failed?.flags.contains(.failed) == true)
        #expect(attribute?.resendForward?.ids == [sources[0].id] && attribute?.resendForward?.fromPeerId == group)
        try await client.stop()
    }

    @Test("a file that cannot be read fails the message with the reason; resent once the file is back, it arrives")
    func unreadableFileThenResend() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 53, users: 2, groups: 0, channels: 0, secretChats: 0,
                                                                                 initialHistory: 2...3, faults: .none))
        let directory = SyncTemporaryDirectory()
        let path = directory.path + "/photo.jpg"
        let content = Self.bytes(3_000, seed: 2)
        try Self.write(content, to: path)
        let client = try await SyncClient.open(path: directory.path + "/db", accountPeerId: server.accountPeerId, transport: server,
                                               configuration: .fast)
        let user = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.user })
        // Queued before syncing starts; the file is gone when the upload runs.
        let localId = try await client.outbound.sendMedia(peerId: user, file: SyncOutgoingFile(path: path, fileName: "photo.jpg", mimeType: "image/jpeg"),
                                                          caption: "a photo", timestamp: 3_000)
        try FileManager.default.removeItem(atPath: path)
        await #expect(throws: OutboundError.self) {
            try await client.outbound.sendMedia(peerId: user, file: SyncOutgoingFile(path: path, fileName: "x", mimeType: "image/jpeg"), caption: "", timestamp: 1)
        }
        try await client.start()
        #expect(try await Self.eventually { try await client.postbox.transaction { try $0.getMessage(localId) }?.flags.contains(.failed) == true })
        let failed = try await client.postbox.transaction { try $0.getMessage(localId) }
        let reason = failed?.attributes.lazy.compactMap { $0 as? SyncSendFailureAttribute }.first?.reason ?? ""
        #expect(reason.hasPrefix("FILE_UNREADABLE"), "reason: \(reason)")
        #expect(Self.messages(server, text: "a photo").isEmpty)

        try Self.write(content, to: path)
        try await client.outbound.resendMessage(localId)
        #expect(await Self.eventually { Self.messages(server, text: "a photo").count == 1 })
        await client.waitUntilQuiet()
        if case let .document(document)? = Self.messages(server, text: "a photo").first?.content.media {
            #expect(server.uploadedFile(document.id) == content)
        } else {
            Issue.record("no document sent")
        }
        try await client.stop()
    }

    @Test("the server's upload rules: parts in any order, a part outside the file, a changed part count, a missing part, an oversize part")
    func serverUploadRules() async throws {
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 54, users: 2, groups: 0, channels: 0, secretChats: 0,
                                                                                 initialHistory: 1...2, faults: .none))
        let user = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.user })
        let parts = (0..<4).map { Self.bytes(100, seed: UInt64(10 + $0)) }
        for part in [2, 0, 3, 2] { try await server.saveFilePart(fileId: 7, part: Int32(part), totalParts: 4, bytes: parts[part]) }
        let mutation = { (sequence: Int64) in ClientMutationId(clientId: 1, sequence: sequence) }
        let file = ApiInputFile(id: 7, parts: 4, name: "a.bin", mimeType: "application/octet-stream", size: 400)
        await #expect(throws: SyncTransportError.rejected(reason: "FILE_PART_1_MISSING")) {
            _ = try await server.sendMedia(peerId: user, file: file, caption: "", randomId: 1, mutation: mutation(1))
        }
        try await server.saveFilePart(fileId: 7, part: 1, totalParts: 4, bytes: parts[1])
        #expect(server.uploadedFile(7) == parts.flatMap { $0 })
        await #expect(throws: SyncTransportError.rejected(reason: "FILE_PART_INVALID")) {
            try await server.saveFilePart(fileId: 7, part: 4, totalParts: 4, bytes: parts[0])
        }
        await #expect(throws: SyncTransportError.rejected(reason: "FILE_PARTS_INVALID")) {
            try await server.saveFilePart(fileId: 7, part: 0, totalParts: 5, bytes: parts[0])
        }
        await #expect(throws: SyncTransportError.rejected(reason: "FILE_PART_INVALID")) {
            try await server.saveFilePart(fileId: 8, part: 0, totalParts: 1, bytes: [UInt8](repeating: 1, count: ApiUploadLimits.maxPartSize + 1))
        }
        await #expect(throws: SyncTransportError.rejected(reason: "FILE_PART_INVALID")) {
            try await server.saveFilePart(fileId: 8, part: 0, totalParts: 1, bytes: [])
        }
        let answer = try await server.sendMedia(peerId: user, file: file, caption: "four parts", randomId: 2, mutation: mutation(2))
        #expect(try await server.sendMedia(peerId: user, file: file, caption: "four parts", randomId: 2, mutation: mutation(2)) == answer)
        #expect(Self.messages(server, text: "four parts").count == 1)
        await #expect(throws: SyncTransportError.rejected(reason: "PEER_ID_INVALID")) {
            _ = try await server.forwardMessages(fromPeerId: user, ids: [1], toPeerId: PeerId(SyncNamespaces.secretChat, 1), randomIds: [3], mutation: mutation(3))
        }
        await #expect(throws: SyncTransportError.rejected(reason: "MESSAGE_ID_INVALID")) {
            _ = try await server.forwardMessages(fromPeerId: user, ids: [999_999], toPeerId: user, randomIds: [4], mutation: mutation(4))
        }
    }

    @Test("an upload SIGKILLed mid-way resumes in the next process from the first part not acknowledged")
    func uploadResumesAfterKill() async throws {
        guard let executable = SyncChild.locate("boxwood-sync-child") else {
            Issue.record("boxwood-sync-child was not found; run `swift build --build-tests` first (or set BOXWOOD_SYNC_CHILD)")
            return
        }
        ProcessSignals.ignoreBrokenPipe()
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 55, users: 3, groups: 1, channels: 1, secretChats: 0,
                                                                                 initialHistory: 3...6, faults: .none))
        let directory = SyncTemporaryDirectory()
        let database = directory.path + "/db"
        let path = directory.path + "/video.mp4"
        let content = Self.bytes(40 * 1024 + 17, seed: 3)
        try Self.write(content, to: path)
        let user = try #require(server.snapshot().chatStates.keys.sorted().first { $0.namespace == SyncNamespaces.user })
        let arguments = [database, String(server.accountPeerId.toInt64())]

        // The first child is killed right after the server stored the 12th part.
        let killer = PartKiller(after: 12)
        let first = try SyncChild(executable: executable, arguments: arguments, stderrPath: directory.path + "/first.stderr", server: server,
                                  onAnswer: { killer.answered($0) })
        killer.attach(first.process)
        first.host.start()
        let queued = await withDeadline(.seconds(30)) {
            await first.host.command(.sendFile(peerId: user, path: path, fileName: "video.mp4", mimeType: "video/mp4", caption: "the video"))
        }
        #expect(queued == .some(.queued), "sendFile answered \(String(describing: queued))")
        #expect(try await first.reap() == .signaled(SIGKILL), "\(SyncChild.tail(directory.path + "/first.stderr"))")
        await first.host.waitUntilClosed()
        #expect(Self.messages(server, text: "the video").isEmpty)

        // The second child resumes.
        let second = try SyncChild(executable: executable, arguments: arguments, stderrPath: directory.path + "/second.stderr", server: server,
                                   onAnswer: nil)
        second.host.start()
        #expect(await Self.eventually(.seconds(60)) { Self.messages(server, text: "the video").count == 1 })
        let quiet = await withDeadline(.seconds(60)) { await second.host.command(.quiesce) }
        #expect(quiet == .some(.quiet))
        _ = await withDeadline(.seconds(30)) { await second.host.command(.exit) }
        _ = try await second.reap()
        await second.host.waitUntilClosed()

        let sent = Self.messages(server, text: "the video")
        #expect(sent.count == 1)
        guard case let .document(document)? = sent.first?.content.media else {
            Issue.record("no document sent")
            return
        }
        #expect(server.uploadedFile(document.id) == content)
        let received = server.partsReceived(document.id)
        #expect(received.keys.sorted() == Array(0..<41))
        // Parts acknowledged before the kill are not sent again; at most the part in flight at the kill is.
        let repeated = received.filter { $0.value > 1 }
        #expect(repeated.count <= 1 && repeated.values.allSatisfy { $0 == 2 }, "parts sent again: \(repeated)")
        #expect(received.filter { $0.key < 11 }.values.allSatisfy { $0 == 1 })
        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: database)
        let report = try await ConsistencyCheck.check(postbox, server: server)
        #expect(report.differences.isEmpty, "\(report.differences.prefix(10))")
        try await postbox.close()
    }
}

/// SIGKILLs a child right after the server answered its `count`th `saveFilePart`.
final class PartKiller: @unchecked Sendable {
    private let lock = NSLock()
    private let count: Int
    private var answered = 0
    private var process: ChildProcess?

    init(after count: Int) { self.count = count }

    func attach(_ process: ChildProcess) { lock.withLock { self.process = process } }

    func answered(_ kind: PipeRequestKind) {
        guard kind == .saveFilePart else { return }
        let target: ChildProcess? = lock.withLock {
            answered += 1
            return answered == count ? process : nil
        }
        target?.kill()
    }
}
