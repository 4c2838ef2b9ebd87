// boxwood-large-account <directory> [--chats <n>] [--messages <n per chat>]
//
// The large-account run (Tests/BoxwoodSyncTests/LargeAccountTests.swift): opens (or creates) a sync database in
// <directory>, syncs it in this process against a SyntheticAccountServer of <chats> chats × <messages> messages
// (defaults 5,000 × 2,000; computed on demand, nothing of it held in memory), with the whole dialog list fetched at
// once (`SyncConfiguration.dialogPagesAtReset` = Int.max: the worst case a first sync can take, not the default of one
// page and a chat-list hole), waits until the client is quiet, checks what was stored, and prints one JSON line on
// stdout:
//
//     {"chats":…,"chatsListed":…,"topMessagesStored":…,"messagesStored":…,"holesBelowTop":…,"seconds":…,"peakResidentBytes":…}
//
// `chatsListed` counts the chat rows of the root chat list, `topMessagesStored` the chats whose newest server
// message is stored, `messagesStored` every stored cloud message, `holesBelowTop` the chats with a hole below their
// top message (deeper history waits for a view), `seconds` the sync alone (open to quiet), `peakResidentBytes` the
// process's peak resident set size at the end (the platform layer's `getrusage`).
//
// Exit status: 0 after printing; 2 on bad arguments; 3 when the database cannot be opened or read.

import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation

func fail(_ status: Int32, _ text: String) -> Never {
    FileHandle.standardError.write(Data("boxwood-large-account: \(text)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var chats = 5_000
var messagesPerChat = 2_000
var positional: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--chats", "--messages":
        guard let value = arguments.first.flatMap({ Int($0) }), value >= 1 else { fail(2, "\(argument) needs a positive number") }
        arguments.removeFirst()
        if argument == "--chats" { chats = value } else { messagesPerChat = value }
    default:
        positional.append(argument)
    }
}
guard positional.count == 1 else { fail(2, "usage: boxwood-large-account <directory> [--chats <n>] [--messages <n>]") }
guard Int64(chats) * Int64(messagesPerChat) < 1_000_000_000 else { fail(2, "the account is too large for Int32 ids") }

/// What the run found stored.
struct Stored {
    var chatsListed = 0
    var topMessagesStored = 0
    var messagesStored = 0
    var holesBelowTop = 0
}

/// Counts, one chat-list page and one history page at a time, what the database holds.
func inspect(_ postbox: Postbox, server: SyntheticAccountServer) async throws -> Stored {
    var stored = Stored()
    var before: ChatListIndex?
    while true {
        let page = try await postbox.transaction { [before] transaction in
            try transaction.getChatListEntries(groupId: .root, before: before, count: 500)
        }
        stored.chatsListed += page.filter { if case .chat = $0 { true } else { false } }.count
        guard let last = page.last, page.count == 500 else { break }
        before = last.index
    }
    for i in 0..<server.chats {
        let peerId = server.peer(ofChat: i)
        // The newest message the server has (one message: the window at the top).
        guard let top = try await server.getHistory(peerId: peerId, offsetId: 0, addOffset: 0, limit: 1, maxId: 0, minId: 0).first else { continue }
        let chat = try await postbox.transaction { transaction in
            var count = 0
            var anchor: MessageIndex?
            while true {
                let messages = try transaction.getMessageHistory(peerId: peerId, namespaces: [SyncNamespaces.cloudMessages],
                                                                 anchor: anchor, direction: .earlier, limit: 1_000)
                count += messages.count
                guard let oldest = messages.last, messages.count == 1_000 else { break }
                anchor = oldest.index
            }
            let topStored = try transaction.getMessage(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: top.id)) != nil
            let holes = try transaction.getHoles(peerId: peerId, namespace: SyncNamespaces.cloudMessages)
            return (count, topStored, holes.contains { $0.upperBound < top.id })
        }
        stored.messagesStored += chat.0
        if chat.1 { stored.topMessagesStored += 1 }
        if chat.2 { stored.holesBelowTop += 1 }
    }
    return stored
}

let server: SyntheticAccountServer
do {
    server = try SyntheticAccountServer(chats: chats, messagesPerChat: messagesPerChat)
} catch {
    fail(2, "\(error)")
}
let started = ContinuousClock.now
let stored: Stored
let elapsed: Duration
do {
    var configuration = SyncConfiguration()
    configuration.dialogPagesAtReset = Int.max
    let client = try await SyncClient.open(path: positional[0] + "/db", accountPeerId: server.accountPeerId, transport: server,
                                           configuration: configuration)
    try await client.start()
    await client.waitUntilQuiet()
    elapsed = ContinuousClock.now - started
    stored = try await inspect(client.postbox, server: server)
    try await client.stop()
} catch {
    fail(3, "\(error)")
}
let peak: UInt64
do {
    peak = try CurrentProcess.peakResidentBytes()
} catch {
    fail(3, "getrusage failed: \(error)")
}
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
let fields: [(String, String)] = [
    ("chats", "\(chats)"), ("messagesPerChat", "\(messagesPerChat)"), ("chatsListed", "\(stored.chatsListed)"),
    ("topMessagesStored", "\(stored.topMessagesStored)"), ("messagesStored", "\(stored.messagesStored)"),
    ("holesBelowTop", "\(stored.holesBelowTop)"), ("seconds", String(format: "%.3f", seconds)), ("peakResidentBytes", "\(peak)"),
]
print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
