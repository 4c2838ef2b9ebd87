import Boxwood
import BoxwoodPlatform
import BoxwoodSync
import BoxwoodSyncSimulator
import Foundation
import BoxwoodTestSupport
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Kill-and-restart sync test. The test process owns the simulated server (faults on); the client runs in a child
// process (boxwood-sync-child) talking to it over the process transport (line-framed JSON on the child's
// stdin/stdout, see Sources/BoxwoodSyncSimulator/ProcessTransport/). Per seed, one database goes through several
// cycles: offline traffic, a child is spawned on the database, traffic plus sends/reads the child is asked to
// queue, then SIGKILL at a random moment — a delay after the spawn (opening, recovery, the first difference), right
// after the server answered the n-th getDifference / getChannelDifference / getHistory / getDialogs / sendMessage
// / readHistory (so often mid-replay or mid-commit, or with a send applied and its answer lost), or right after a
// send command (before or after the local message was committed). At the end a last child quiesces with faults off
// and exits cleanly; the test opens the database itself and requires it to match the server (ConsistencyCheck:
// cursor, channel pts, messages outside holes, read positions, no outbound entry left), every send the child
// acknowledged (`queued`) to have been applied by the server exactly once, no send applied twice, and no text
// stored twice locally.
//
// Run `swift build --build-tests` first: the test runs the built boxwood-sync-child (BOXWOOD_SYNC_CHILD overrides
// its location). BOXWOOD_SYNC_KILL_SEEDS sets the number of seeds (default 4), BOXWOOD_SYNC_KILL_SEED runs one
// seed, BOXWOOD_SYNC_KILL_CYCLES the kills per seed (default 8). Kill timing is not deterministic; the seed fixes
// the world, the traffic, the plans and the texts.

@Suite("Sync kill and restart", .serialized, .timeLimit(.minutes(10)))
struct SyncKillTests {
    @Test("the protocol types round-trip through the wire's JSON")
    func wireTypesRoundTrip() throws {
        let user = PeerId(namespace: SyncNamespaces.user, id: PeerId.Id(1_001))
        let channel = PeerId(namespace: SyncNamespaces.channel, id: PeerId.Id(-(1 << 60)))
        let message = ApiMessage(id: 7, peerId: user, fromId: user, date: 1_700_000_000, text: "line\nbreak \"quoted\" ✓",
                                 outgoing: true, editVersion: 2, pinned: true, randomId: Int64.max)
        let values: [ApiUpdates] = [
            .updates(updates: [.newMessage(message, pts: 5, ptsCount: 1), .messageId(id: 7, randomId: Int64.min),
                               .channelTooLong(channelId: channel, pts: nil), .userStatus(userId: user, status: .online(expires: 9)),
                               .userName(userId: user, firstName: "A", lastName: "B", username: nil)],
                     users: [ApiUser(id: user, firstName: "A", lastName: "B", username: "ab")],
                     chats: [ApiChat(id: channel, title: "C")], date: 3, seq: 4),
            .updateShortSentMessage(id: 1, pts: 2, ptsCount: 1, date: 3),
            .updatesTooLong,
        ]
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        for value in values {
            let data = try encoder.encode(value)
            #expect(!data.contains(UInt8(ascii: "\n")))
            #expect(try decoder.decode(ApiUpdates.self, from: data) == value)
        }
        let difference = ApiDifference.slice(newMessages: [message], newEncryptedMessages: [
            ApiEncryptedMessage(chatId: PeerId(namespace: SyncNamespaces.secretChat, id: PeerId.Id(4_001)), id: 1, randomId: -1, date: 2, text: "s"),
        ], otherUpdates: [], chats: [], users: [], intermediateState: ApiUpdatesState(pts: 1, qts: 2, date: 3, seq: 4))
        #expect(try decoder.decode(ApiDifference.self, from: encoder.encode(difference)) == difference)
        let push = SyncPushEvent.updates(.updateShort(update: .notifySettings(peerId: channel, muteUntil: 1), date: 2))
        #expect(try decoder.decode(SyncPushEvent.self, from: encoder.encode(push)) == push)
        #expect(try decoder.decode(SyncTransportError.self, from: encoder.encode(SyncTransportError.floodWait(seconds: 0.5))) == .floodWait(seconds: 0.5))
        #expect(try decoder.decode(PeerId.self, from: encoder.encode(channel)) == channel)
    }

    @Test("the process transport in one process: answers, pushes, commands, and .disconnected once the parent is gone")
    func pipeTransportInProcess() async throws {
        ProcessSignals.ignoreBrokenPipe()
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(seed: 7, users: 3, groups: 1, channels: 1, secretChats: 0))
        let toChild = try PipeDescriptors()
        let fromChild = try PipeDescriptors()
        let host = PipeServerHost(server: server, input: fromChild.readEnd, output: toChild.writeEnd)
        host.start()
        let transport = PipeTransport(input: toChild.readEnd, output: fromChild.writeEnd)
        #expect(try await transport.getState() == server.snapshot().state)
        let dialogs = try await transport.getDialogs(offset: nil, limit: 2)
        #expect(dialogs == (try await server.getDialogs(offset: nil, limit: 2)))
        let next = try #require(dialogs.nextOffset)
        #expect(try await transport.getDialogs(offset: next, limit: 100) == (try await server.getDialogs(offset: next, limit: 100)))
        let page = try await transport.getHistory(peerId: dialogs.dialogs[0].peerId, offsetId: dialogs.dialogs[0].topMessage, addOffset: -2,
                                                  limit: 4, maxId: 0, minId: 0)
        #expect(page == (try await server.getHistory(peerId: dialogs.dialogs[0].peerId, offsetId: dialogs.dialogs[0].topMessage,
                                                     addOffset: -2, limit: 4, maxId: 0, minId: 0)))
        let pushes = await transport.connect()
        var iterator = pushes.makeAsyncIterator()
        #expect(await iterator.next() == .newSession)
        server.generate(events: 3)
        #expect(await iterator.next() != nil)
        async let reply = host.command(.quiesce)
        for await command in transport.commands {
            #expect(command.command == .quiesce)
            transport.reply(to: command.id, .quiet)
            break
        }
        #expect(await reply == .quiet)
        #expect(host.requestsServed[.getState] == 1)
        // The parent goes away: requests fail with .disconnected, the push stream and the commands end.
        host.disconnect()
        await host.waitUntilClosed()
        await #expect(throws: SyncTransportError.disconnected) { try await transport.getState() }
        while await iterator.next() != nil {}
        #expect(!transport.isConnected)
        #expect(await host.command(.exit) == nil)
    }

    @Test("a client SIGKILLed mid-sync and restarted converges, nothing lost or duplicated (BOXWOOD_SYNC_KILL_SEEDS)")
    func killedClientConverges() async throws {
        guard let executable = SyncChild.locate("boxwood-sync-child") else {
            Issue.record("boxwood-sync-child was not found; run `swift build --build-tests` first (or set BOXWOOD_SYNC_CHILD)")
            return
        }
        ProcessSignals.ignoreBrokenPipe()
        let environment = ProcessInfo.processInfo.environment
        let cycles = max(1, environment["BOXWOOD_SYNC_KILL_CYCLES"].flatMap(Int.init) ?? 8)
        let seeds: [UInt64]
        if let single = environment["BOXWOOD_SYNC_KILL_SEED"].flatMap(UInt64.init) {
            seeds = [single]
        } else {
            let count = environment["BOXWOOD_SYNC_KILL_SEEDS"].flatMap(Int.init) ?? 4
            seeds = (0..<UInt64(max(1, count))).map { 5_000 + $0 }
        }
        let started = ContinuousClock.now
        let totals = KillTotals()
        var failures: [String] = []
        for seed in seeds {
            let run = SyncKillRun(seed: seed, cycles: cycles, executable: executable, totals: totals)
            let problems = await run.run()
            failures += problems.prefix(10).map { "seed \(seed): \($0)" }
        }
        print("sync kill: \(seeds.count) seeds (\(seeds.first!)…\(seeds.last!)), \(cycles) kills each, \(failures.count) problems, "
              + "\(started.duration(to: .now)); \(totals.summary)")
        #expect(failures.isEmpty, "\(failures.prefix(30).joined(separator: "\n"))")
    }
}

// MARK: - One seed

/// When a cycle's child is killed.
enum SyncKillPlan: CustomStringConvertible {
    /// This long after the spawn (opening, recovery, first difference, traffic).
    case afterDelay(milliseconds: Int)
    /// Right after the server answered the `nth` request of `kind`, plus a pause.
    case afterAnswer(PipeRequestKind, nth: Int, pauseMicroseconds: Int)
    /// Right after the `nth` send command was issued, plus a pause (before or after the child queued it).
    case duringSend(nth: Int, pauseMicroseconds: Int)

    static func random(using random: inout some RandomNumberGenerator) -> SyncKillPlan {
        let pause = Int.random(in: 0...3_000, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<3:
            return .afterDelay(milliseconds: Int.random(in: 0...150, using: &random))
        case 3..<8:
            let kinds: [PipeRequestKind] = [.getDifference, .getDifference, .getChannelDifference, .getHistory, .getDialogs,
                                            .sendMessage, .readHistory]
            let kind = kinds[Int.random(in: 0..<kinds.count, using: &random)]
            return .afterAnswer(kind, nth: Int.random(in: 1...(kind == .getDialogs ? 1 : 4), using: &random), pauseMicroseconds: pause)
        default:
            return .duringSend(nth: Int.random(in: 1...3, using: &random), pauseMicroseconds: pause)
        }
    }

    var description: String {
        switch self {
        case let .afterDelay(milliseconds): return "\(milliseconds) ms after the spawn"
        case let .afterAnswer(kind, nth, pause): return "\(pause) µs after answering \(kind) #\(nth)"
        case let .duringSend(nth, pause): return "\(pause) µs after send command #\(nth)"
        }
    }
}

/// Kills one child, once, when its plan says so (or when told to); never after ``disarm()``.
final class KillSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private let plan: SyncKillPlan?
    private var process: ChildProcess?
    private var armed = true
    private(set) var fired = false
    private var answers: [PipeRequestKind: Int] = [:]
    private var sends = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(plan: SyncKillPlan?) { self.plan = plan }

    func attach(_ process: ChildProcess) { lock.withLock { self.process = process } }

    /// Whether the plan fired (rather than the fallback).
    var firedByPlan: Bool { lock.withLock { fired } }

    /// The host answered a request.
    func answered(_ kind: PipeRequestKind) {
        let pause: Int? = lock.withLock {
            answers[kind, default: 0] += 1
            guard case let .afterAnswer(planned, nth, pause)? = plan, planned == kind, answers[kind] == nth else { return nil }
            return pause
        }
        if let pause { fire(afterMicroseconds: pause) }
    }

    /// A send command was issued.
    func sendIssued() {
        let pause: Int? = lock.withLock {
            sends += 1
            guard case let .duringSend(nth, pause)? = plan, sends == nth else { return nil }
            return pause
        }
        if let pause { fire(afterMicroseconds: pause) }
    }

    func fire(afterMicroseconds pause: Int) {
        if pause == 0 {
            fire()
        } else {
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(pause)) { self.fire() }
        }
    }

    /// SIGKILLs the child now (once; nothing after ``disarm()``).
    func fire() {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            guard armed, !fired, let process else { return [] }
            process.kill()
            fired = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Returns when the switch fired or `timeout` passed.
    func waitFired(timeout: Duration) async {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.releaseWaiters()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock {
                if fired { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }

    private func releaseWaiters() {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// No kill after this (the child is about to be reaped; its pid may then be reused).
    func disarm() { lock.withLock { armed = false } }
}

/// What a cycle's driver did.
struct DriverLog: Sendable {
    var requested: [String] = []
    var acknowledged: [String] = []
    var failedReplies: [String] = []
    var reads = 0
}

/// Sums over the seeds of a run.
final class KillTotals: @unchecked Sendable {
    private let lock = NSLock()
    private var kills = 0, planKills = 0, fallbackKills = 0, sends = 0, acknowledged = 0, unacknowledged = 0, appliedUnacknowledged = 0
    private var reads = 0, compared = 0, inHoles = 0, requests: [PipeRequestKind: Int] = [:], plans: [String: Int] = [:]

    func addKill(plan: SyncKillPlan, byPlan: Bool, served: [PipeRequestKind: Int]) {
        lock.withLock {
            kills += 1
            if byPlan { planKills += 1 } else { fallbackKills += 1 }
            let name: String
            switch plan {
            case .afterDelay: name = "delay"
            case let .afterAnswer(kind, _, _): name = "after \(kind)"
            case .duringSend: name = "during send"
            }
            plans[name, default: 0] += byPlan ? 1 : 0
            requests.merge(served, uniquingKeysWith: +)
        }
    }

    func addServed(_ served: [PipeRequestKind: Int]) { lock.withLock { requests.merge(served, uniquingKeysWith: +) } }

    func addSends(requested: Int, acknowledged ack: Int, appliedUnacknowledged applied: Int, reads read: Int) {
        lock.withLock {
            sends += requested
            acknowledged += ack
            unacknowledged += requested - ack
            appliedUnacknowledged += applied
            reads += read
        }
    }

    func addReport(_ report: ConsistencyReport) {
        lock.withLock {
            compared += report.messagesCompared
            inHoles += report.messagesInHoles
        }
    }

    var summary: String {
        lock.withLock {
            let planList = plans.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let requestList = PipeRequestKind.allCases.map { "\($0) \(requests[$0] ?? 0)" }.joined(separator: ", ")
            return "kills \(kills) (by plan \(planKills) [\(planList)], fallback \(fallbackKills)); sends \(sends): acknowledged "
                + "\(acknowledged), killed before the ack \(unacknowledged) (of which applied \(appliedUnacknowledged)); reads \(reads); "
                + "messages compared \(compared), in holes \(inHoles); requests served: \(requestList)"
        }
    }
}

/// One seed: a database killed `cycles` times, then a clean run and the checks.
struct SyncKillRun {
    let seed: UInt64
    let cycles: Int
    let executable: String
    let totals: KillTotals

    func run() async -> [String] {
        do {
            return try await runThrowing()
        } catch {
            return ["\(error)"]
        }
    }

    private func runThrowing() async throws -> [String] {
        var random = TestRandom(seed: seed)
        let resets = seed % 3 == 0
        let server = SimulatedServer(configuration: SimulatedServerConfiguration(
            seed: seed, users: 5, groups: 2, channels: 2, secretChats: 1, initialHistory: 5...40,
            differenceSliceSize: 8 + Int(seed % 7), channelTooLongThreshold: resets ? 6 : 200, faults: .realistic))
        let directory = SyncTemporaryDirectory()
        let databasePath = directory.path + "/db"
        let chats = server.snapshot().chatStates.keys.sorted()
        let viewed = Array(chats.shuffled(using: &random).prefix(3))
        let arguments = [databasePath, String(server.accountPeerId.toInt64()),
                         "--view", viewed.map { String($0.toInt64()) }.joined(separator: ","),
                         "--pts-limit", resets ? "10" : "1000"]
        print("sync kill: seed \(seed) (BOXWOOD_SYNC_KILL_SEED=\(seed) replays it), \(cycles) kills, viewing \(viewed)"
              + (resets ? ", tiny pts_total_limit and channel threshold" : ""))
        var problems: [String] = []
        var requested: [String] = []
        var acknowledged: Set<String> = []
        var reads = 0

        for cycle in 0..<cycles {
            // Offline traffic: the next child starts behind (slices, tooLong with the tiny limits).
            server.generate(events: Int.random(in: 0...30, using: &random))
            if resets, Bool.random(using: &random) { server.generateBurst(messages: Int.random(in: 10...30, using: &random)) }
            let plan = SyncKillPlan.random(using: &random)
            let killSwitch = KillSwitch(plan: plan)
            let stderrPath = directory.path + "/child-\(cycle).stderr"
            let child = try SyncChild(executable: executable, arguments: arguments, stderrPath: stderrPath, server: server,
                                      onAnswer: { killSwitch.answered($0) })
            killSwitch.attach(child.process)
            child.host.start()
            let driverSeed = random.next()
            let driver = Task { await Self.drive(child.host, server: server, seed: driverSeed, tag: "s\(seed) c\(cycle)", killSwitch: killSwitch) }
            switch plan {
            case let .afterDelay(milliseconds):
                try? await Task.sleep(for: .milliseconds(milliseconds))
                killSwitch.fire()
            case .afterAnswer, .duringSend:
                await killSwitch.waitFired(timeout: .milliseconds(700))
            }
            let byPlan = killSwitch.firedByPlan
            killSwitch.fire()
            killSwitch.disarm()
            let termination = try await child.reap()
            await child.host.waitUntilClosed()
            let log = await driver.value
            totals.addKill(plan: plan, byPlan: byPlan, served: child.host.requestsServed)
            requested += log.requested
            acknowledged.formUnion(log.acknowledged)
            reads += log.reads
            problems += log.failedReplies.map { "cycle \(cycle): \($0)" }
            if termination != .signaled(SIGKILL) {
                problems.append("cycle \(cycle) (kill \(plan)): the child ended with \(termination) before the kill; stderr: \(SyncChild.tail(stderrPath))")
            }
        }

        // The last child: faults off, everything delivered, quiesce, exit cleanly.
        server.setFaults(.none)
        let killSwitch = KillSwitch(plan: nil)
        let stderrPath = directory.path + "/child-final.stderr"
        let child = try SyncChild(executable: executable, arguments: arguments, stderrPath: stderrPath, server: server, onAnswer: nil)
        killSwitch.attach(child.process)
        child.host.start()
        server.deliverDelayed()
        let quiet = await withDeadline(.seconds(60)) { await child.host.command(.quiesce) }
        if quiet != .some(.quiet) { problems.append("final quiesce answered \(String(describing: quiet)); stderr: \(SyncChild.tail(stderrPath))") }
        let stopped = await withDeadline(.seconds(30)) { await child.host.command(.exit) }
        if stopped != .some(.stopped) { problems.append("final exit answered \(String(describing: stopped))") }
        if stopped == nil || quiet == nil { killSwitch.fire() }
        killSwitch.disarm()
        let termination = try await child.reap()
        await child.host.waitUntilClosed()
        totals.addServed(child.host.requestsServed)
        if termination != .exited(0) { problems.append("the final child ended with \(termination); stderr: \(SyncChild.tail(stderrPath))") }

        // The database, opened here, against the server.
        try SyncClient.registerTypes()
        let postbox = try await SyncClient.openPostbox(path: databasePath)
        let report = try await ConsistencyCheck.check(postbox, server: server)
        let snapshot = server.snapshot()
        let local = try await SyncInspector.read(postbox, peerIds: Array(snapshot.chatStates.keys) + snapshot.allPeers)
        try await postbox.close()
        problems += report.differences
        totals.addReport(report)

        // Exactly-once sends: every acknowledged text applied once by the server, no text applied twice, no text
        // stored twice locally.
        let requestedSet = Set(requested)
        var applied: [String: Int] = [:]
        for message in server.messagesSent() where requestedSet.contains(message.text) { applied[message.text, default: 0] += 1 }
        for text in requested.sorted() {
            let count = applied[text] ?? 0
            if acknowledged.contains(text) {
                if count != 1 { problems.append("acknowledged send \"\(text)\" applied \(count) times") }
            } else if count > 1 {
                problems.append("unacknowledged send \"\(text)\" applied \(count) times")
            }
        }
        var stored: [String: Int] = [:]
        for chat in local.chats.values {
            for message in chat.messages.values where requestedSet.contains(message.text) { stored[message.text, default: 0] += 1 }
            for message in chat.unsent where requestedSet.contains(message.text) { stored[message.text, default: 0] += 1 }
        }
        for (text, count) in stored where count > 1 { problems.append("\"\(text)\" stored \(count) times") }
        let appliedUnacknowledged = requested.filter { !acknowledged.contains($0) && applied[$0] == 1 }.count
        totals.addSends(requested: requested.count, acknowledged: acknowledged.count, appliedUnacknowledged: appliedUnacknowledged, reads: reads)
        print("sync kill: seed \(seed): \(requested.count) sends (\(acknowledged.count) acknowledged, \(appliedUnacknowledged) applied "
              + "without ack), \(reads) reads, \(report), \(report.messagesCompared) messages compared, \(report.holes) holes left")
        if !problems.isEmpty {
            print("sync kill: seed \(seed) FAILED (database kept at \(databasePath)): \(problems.prefix(5))")
            // What the client missed: its cursor and, for each channel behind, the events it lacks.
            print("sync kill: seed \(seed): local cursor \(String(describing: local.cursor)), server \(snapshot.state)")
            for (channelId, pts) in snapshot.channelPts.sorted(by: { $0.key < $1.key }) {
                guard let localPts = local.chats[channelId]?.channelPts, localPts != pts else { continue }
                let missed = try? await server.getChannelDifference(channelId: channelId, pts: localPts, limit: 20)
                print("sync kill: seed \(seed): channel \(channelId) at \(localPts), server \(pts), missed: \(String(describing: missed).prefix(1_500))")
            }
        }
        directory.keep = !problems.isEmpty
        return problems
    }

    /// Traffic and commands while a child lives: server events, sends (unique texts) and reads, until the child
    /// is gone.
    static func drive(_ host: PipeServerHost, server: SimulatedServer, seed: UInt64, tag: String, killSwitch: KillSwitch) async -> DriverLog {
        var random = TestRandom(seed: seed)
        var log = DriverLog()
        let chats = server.snapshot().chatStates.keys.sorted().filter { $0.namespace != SyncNamespaces.secretChat }
        var round = 0
        while !host.isClosed && round < 400 {
            round += 1
            server.generate(events: Int.random(in: 1...5, using: &random))
            if Double.random(in: 0..<1, using: &random) < 0.5 {
                let peerId = chats[Int.random(in: 0..<chats.count, using: &random)]
                let text = "kill test \(tag) r\(round) \(random.next() % 1_000_000)"
                log.requested.append(text)
                async let reply = host.command(.send(peerId: peerId, text: text, date: server.snapshot().state.date))
                killSwitch.sendIssued()
                switch await reply {
                case .queued?: log.acknowledged.append(text)
                case nil: return log
                case let other?: log.failedReplies.append("send \(text) answered \(other)")
                }
            }
            if Double.random(in: 0..<1, using: &random) < 0.3 {
                let peerId = chats[Int.random(in: 0..<chats.count, using: &random)]
                if let top = server.snapshot().chatStates[peerId]?.messages.keys.max() {
                    switch await host.command(.read(peerId: peerId, maxId: top)) {
                    case .readQueued?: log.reads += 1
                    case nil: return log
                    case let other?: log.failedReplies.append("read \(peerId) answered \(other)")
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 1...8, using: &random)))
        }
        return log
    }
}

/// `body`'s result, or nil when it takes longer than `limit` (it is left running).
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

// MARK: - The child process

/// A boxwood-sync-child started through the platform layer's ``ChildProcess``, its stdin and stdout pipes owned by a
/// ``PipeServerHost``, stderr to a file.
final class SyncChild: Sendable {
    let process: ChildProcess
    let host: PipeServerHost
    var pid: pid_t { process.pid }

    init(executable: String, arguments: [String], stderrPath: String, server: SimulatedServer,
         onAnswer: (@Sendable (PipeRequestKind) -> Void)?) throws(ChildProcessError) {
        var spawned = try ChildProcess.spawn(executable: FilePath(executable), arguments: arguments,
                                             standardInput: .pipe, standardOutput: .pipe,
                                             standardError: .file(FilePath(stderrPath)))
        process = spawned.process
        guard let fromChild = spawned.standardOutput.take(), let toChild = spawned.standardInput.take() else {
            spawned.process.kill()
            _ = try? spawned.process.wait()
            throw ChildProcessError(operation: "spawn \(executable): no pipe end returned", errno: .badFileDescriptor)
        }
        host = PipeServerHost(server: server, input: fromChild, output: toChild, onAnswer: onAnswer)
    }

    /// Waits (without blocking a cooperative thread) for the child to end and reaps it.
    func reap() async throws -> ChildTermination {
        try await process.terminated()
    }

    /// The end of a stderr file, for failure messages.
    static func tail(_ path: String) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "(none)" }
        return String(text.suffix(1_500))
    }

    /// Finds a built executable: `BOXWOOD_SYNC_CHILD`, then the build directory (see `BuiltExecutable`).
    static func locate(_ name: String) -> String? {
        BuiltExecutable.locate(name, override: "BOXWOOD_SYNC_CHILD")
    }
}
