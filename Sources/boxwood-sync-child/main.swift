// boxwood-sync-child <db path> <account peer id as Int64> [--view <peer id>,<peer id>,…] [--pts-limit <n>]
//                    [--mastership if-vacant|take-over]
//
// A sync client in its own process, the victim of the kill-and-restart sync test (Tests/BoxwoodSyncTests/
// SyncKillTests.swift). It opens (or creates) the database, syncs over a PipeTransport on stdin/stdout — the
// parent process owns the simulated server (see Sources/BoxwoodSyncSimulator/ProcessTransport/) — keeps
// message-history views of the `--view` peers open so their holes get filled, and serves the parent's commands
// (send, read, edit, react, quiesce, exit) until `exit` or end of file on stdin. Peer ids are packed Int64s
// (`PeerId.toInt64()`). Stdout is reserved for the protocol: anything else goes to stderr.
//
// `--mastership` is how the client claims the database (SyncMastership; `if-vacant` by default, so a child started
// while another child's process syncs the same database does not sync: it logs "master elsewhere: process N" and
// exits 6). A child whose claim another child takes over logs "mastership lost" and keeps serving commands.
//
// Exit status: 0 after `exit` or when the parent is gone; 2 on bad arguments; 3 when the database cannot be
// opened; 4 when the protocol descriptors cannot be set up; 6 when another running process is the master.

import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func log(_ text: String) {
    FileHandle.standardError.write(Data("[sync-child \(getpid())] \(text)\n".utf8))
}

ProcessSignals.ignoreBrokenPipe()

// The protocol's descriptors are close-on-exec copies of stdin/stdout, owned by the transport; fd 1 then points at
// stderr and fd 0 at /dev/null, so a stray print cannot corrupt the protocol.
func openTransport() -> PipeTransport {
    do {
        let streams = try TakenStandardStreams.take()
        return PipeTransport(input: streams.input, output: streams.output)
    } catch {
        log("cannot set up the protocol descriptors: \(error)")
        exit(4)
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var viewedPeers: [PeerId] = []
var ptsTotalLimit: Int32?
var mastership = SyncMastership.ifVacant
var positional: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--view":
        guard let list = arguments.first else { log("--view needs a list"); exit(2) }
        arguments.removeFirst()
        viewedPeers = list.split(separator: ",").compactMap { Int64($0) }.map(PeerId.init)
    case "--pts-limit":
        guard let value = arguments.first.flatMap({ Int32($0) }) else { log("--pts-limit needs a number"); exit(2) }
        arguments.removeFirst()
        ptsTotalLimit = value
    case "--mastership":
        switch arguments.first {
        case "if-vacant": mastership = .ifVacant
        case "take-over": mastership = .takeOver
        default: log("--mastership needs if-vacant or take-over"); exit(2)
        }
        arguments.removeFirst()
    default:
        positional.append(argument)
    }
}
guard positional.count == 2, let accountRaw = Int64(positional[1]) else {
    log("usage: boxwood-sync-child <db path> <account peer id> [--view id,id,…] [--pts-limit n]")
    exit(2)
}

var configuration = SyncConfiguration.fast
configuration.channelDifferenceLimit = 5
configuration.holeFillPageSize = 10
if let ptsTotalLimit { configuration.ptsTotalLimit = ptsTotalLimit }

let transport = openTransport()
let client: SyncClient
do {
    client = try await SyncClient.open(path: positional[0], accountPeerId: PeerId(accountRaw), transport: transport,
                                       configuration: configuration)
} catch {
    log("cannot open \(positional[0]): \(error)")
    exit(3)
}

// Storage failures the sync layer reports go to stderr; the client keeps running (the next poll, fill or send tries
// again). Nothing else in this process reads the events.
let storageFailureLog = Task {
    for await event in client.manager.events {
        switch event {
        case let .storageFailed(failure): log("storage failed: \(failure)")
        case let .mastershipLost(holder): log("mastership lost: \(holder)")
        default: break
        }
    }
}

var viewTasks: [Task<Void, Never>] = []
for peerId in viewedPeers {
    let stream = client.postbox.view(.messageHistory(peerId: peerId, namespace: SyncNamespaces.cloudMessages, count: 15))
    viewTasks.append(Task {
        do {
            for try await _ in stream {}
        } catch {
            log("history view of \(peerId) failed: \(error)")
        }
    })
}
do {
    try await client.start(mastership: mastership)
} catch let SyncError.masterElsewhere(processId) {
    log("master elsewhere: process \(processId)")
    exit(6)
} catch {
    log("cannot start syncing: \(error)")
    exit(3)
}
log("started on \(positional[0]), viewing \(viewedPeers)")

/// Stops the client and exits; a watchdog exits anyway if stopping hangs.
@MainActor func stopAndExit(reply id: Int64?) async -> Never {
    DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
        log("stopping hung; exiting")
        exit(5)
    }
    for task in viewTasks { task.cancel() }
    storageFailureLog.cancel()
    var status: Int32 = 0
    do {
        try await client.stop()
    } catch {
        log("stop failed: \(error)")
        status = 1
    }
    if let id {
        transport.reply(to: id, status == 0 ? .stopped : .failed("stop failed"))
        transport.flush()
    }
    exit(status)
}

for await command in transport.commands {
    switch command.command {
    case let .send(peerId, text, date):
        do {
            _ = try await client.outbound.sendMessage(peerId: peerId, text: text, timestamp: date)
            transport.reply(to: command.id, .queued)
        } catch {
            transport.reply(to: command.id, .failed("send: \(error)"))
        }
    case let .read(peerId, maxId):
        do {
            try await client.outbound.markRead(peerId: peerId, maxId: maxId)
            transport.reply(to: command.id, .readQueued)
        } catch {
            transport.reply(to: command.id, .failed("read: \(error)"))
        }
    case let .edit(peerId, id, text):
        do {
            try await client.outbound.editMessage(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: id), text: text)
            transport.reply(to: command.id, .actionQueued)
        } catch OutboundError.messageNotFound {
            transport.reply(to: command.id, .notStored)
        } catch {
            transport.reply(to: command.id, .failed("edit: \(error)"))
        }
    case let .react(peerId, id, emoji):
        do {
            try await client.outbound.setReaction(MessageId(peerId: peerId, namespace: SyncNamespaces.cloudMessages, id: id), emoji: emoji)
            transport.reply(to: command.id, .actionQueued)
        } catch OutboundError.messageNotFound {
            transport.reply(to: command.id, .notStored)
        } catch {
            transport.reply(to: command.id, .failed("react: \(error)"))
        }
    case let .sendFile(peerId, path, fileName, mimeType, caption):
        do {
            _ = try await client.outbound.sendMedia(peerId: peerId, file: SyncOutgoingFile(path: path, fileName: fileName, mimeType: mimeType),
                                                    caption: caption, timestamp: Int32(Date().timeIntervalSince1970))
            transport.reply(to: command.id, .queued)
        } catch {
            transport.reply(to: command.id, .failed("sendFile: \(error)"))
        }
    case let .forward(fromPeerId, ids, toPeerId):
        do {
            let sources = ids.map { MessageId(peerId: fromPeerId, namespace: SyncNamespaces.cloudMessages, id: $0) }
            _ = try await client.outbound.forwardMessages(sources, to: toPeerId, timestamp: Int32(Date().timeIntervalSince1970))
            transport.reply(to: command.id, .queued)
        } catch OutboundError.messageNotFound {
            transport.reply(to: command.id, .notStored)
        } catch {
            transport.reply(to: command.id, .failed("forward: \(error)"))
        }
    case .quiesce:
        await client.waitUntilQuiet()
        await client.manager.requestDifference()
        await client.waitUntilQuiet()
        transport.reply(to: command.id, .quiet)
    case .statistics:
        transport.reply(to: command.id, .statistics(await client.manager.statistics))
    case .exit:
        await stopAndExit(reply: command.id)
    }
}
log("the parent is gone")
await stopAndExit(reply: nil)
