import BoxwoodCrashWorkload
import BoxwoodPlatform
import BoxwoodStore
import Foundation
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Support of LazyFSTests: scripts/lazyfs.sh run through the platform layer's ChildProcess, one LazyFS mount, the
// faults written into its config, and the crash-workload harness that runs boxwood-crash-child on a database
// inside the mount and verifies what a power cut left.

/// `scripts/lazyfs.sh`, run with bash; its stdout and stderr go to files read after it ended.
enum LazyFSScript {
    /// The exit status with which the script says LazyFS cannot run here (its stdout says why).
    static let skipStatus: CInt = 77
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/lazyfs.sh").path

    struct Result {
        let termination: ChildTermination
        let output: String
        let errors: String
        var succeeded: Bool { termination == .exited(0) }
        var skipped: Bool { termination == .exited(LazyFSScript.skipStatus) }
        /// The last non-empty line of stdout, else of stderr.
        var lastLine: String {
            func last(_ text: String) -> String? {
                text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.last { !$0.isEmpty }
            }
            return last(output) ?? last(errors) ?? ""
        }
        var description: String {
            "scripts/lazyfs.sh ended with \(termination): \(output.trimmingCharacters(in: .whitespacesAndNewlines)) "
                + errors.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Runs the script with `arguments` and `extraEnvironment` added to this process's environment.
    static func run(_ arguments: [String], extraEnvironment: [String: String] = [:]) -> Result {
        let base = NSTemporaryDirectory() + "boxwood-lazyfs-script-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in extraEnvironment { environment[name] = value }
        do {
            let spawned = try ChildProcess.spawn(
                executable: FilePath("/bin/bash"), arguments: [path] + arguments,
                environment: environment.map { "\($0.key)=\($0.value)" },
                standardInput: .nullDevice, standardOutput: .file(FilePath(base + ".out")),
                standardError: .file(FilePath(base + ".err")))
            let termination = try spawned.process.wait()
            return Result(termination: termination,
                          output: (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
                          errors: (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
        } catch {
            return Result(termination: .exited(127), output: "", errors: "\(error)")
        }
    }
}

/// Whether LazyFS runs here, decided once by `scripts/lazyfs.sh check` (which builds LazyFS the first time and
/// tries a mount).
enum LazyFS {
    enum Availability {
        case available(binary: String)
        /// The script said LazyFS cannot run here (no FUSE, not root, no source, failed build): the tests skip.
        case skipped(reason: String)
        /// The check itself failed (e.g. the trial mount kept an unsynced write): the tests fail.
        case broken(String)
    }

    static let availability: Availability = {
        guard FileManager.default.isExecutableFile(atPath: LazyFSScript.path) else {
            print("LazyFSTests skipped: \(LazyFSScript.path) is missing")
            return .skipped(reason: "\(LazyFSScript.path) is missing")
        }
        let result = LazyFSScript.run(["check"])
        if result.skipped {
            let reason = result.lastLine.hasPrefix("skipped: ") ? String(result.lastLine.dropFirst(9)) : result.lastLine
            print("LazyFSTests skipped: \(reason)")
            return .skipped(reason: reason)
        }
        guard result.succeeded, result.lastLine.hasPrefix("ok ") else {
            print("LazyFSTests: scripts/lazyfs.sh check failed: \(result.description)")
            return .broken(result.description)
        }
        print("LazyFSTests: using \(result.lastLine.dropFirst(3))")
        return .available(binary: String(result.lastLine.dropFirst(3)))
    }()

    /// False only when the script reported a reason to skip (printed when this is first evaluated).
    static var runs: Bool {
        if case .skipped = availability { return false }
        return true
    }

    /// Records an issue when the check failed; true when the tests can go on.
    static func ready() -> Bool {
        if case let .broken(message) = availability {
            Issue.record("scripts/lazyfs.sh check failed: \(message)")
            return false
        }
        return runs
    }
}

struct LazyFSError: Error, CustomStringConvertible {
    let description: String
}

/// One LazyFS mount at `directory/mnt` over `directory/root` (the files that survive a power cut), its FIFO,
/// config and log in `directory`. ``unmount()`` is idempotent; a mount still present at deinit is unmounted.
final class LazyFSMount {
    let directory: String
    var mountPoint: String { directory + "/mnt" }
    /// The backing directory, as LazyFS names files in its faults (`root + "/db/wal"`).
    var root: String { directory + "/root" }
    private(set) var mounted = false

    init(directory: String) {
        self.directory = directory
    }

    deinit {
        if mounted { try? unmount() }
    }

    /// Mounts; `faults` are TOML `[[injection]]` entries for the config, with `@ROOT@` standing for ``root``.
    func mount(faults: String? = nil, logAllOperations: Bool = false) throws(LazyFSError) {
        var arguments = ["mount", directory]
        if let faults {
            let path = directory + "/faults.toml"
            do { try faults.write(toFile: path, atomically: true, encoding: .utf8) } catch {
                throw LazyFSError(description: "writing \(path): \(error)")
            }
            arguments.append(path)
        }
        let result = LazyFSScript.run(arguments, extraEnvironment: ["BOXWOOD_LAZYFS_LOG_ALL": logAllOperations ? "true" : "false"])
        guard result.succeeded else { throw LazyFSError(description: result.description) }
        mounted = true
    }

    func unmount() throws(LazyFSError) {
        let result = LazyFSScript.run(["umount", directory])
        guard result.succeeded else { throw LazyFSError(description: result.description) }
        mounted = false
    }

    /// `lazyfs::clear-cache`: every write not fsynced since it was made is gone, as after a power cut. Returns
    /// once LazyFS reported the cache cleared.
    func clearCache() throws(LazyFSError) {
        let result = LazyFSScript.run(["clear-cache", directory])
        guard result.succeeded else { throw LazyFSError(description: result.description) }
    }

    /// False once the LazyFS process ended (a torn-op or torn-seq fault kills it after persisting its parts).
    var isAlive: Bool {
        LazyFSScript.run(["alive", directory]).succeeded
    }

    /// Whether the current mount's fault fired. LazyFS logs it, then kills itself; the process can take a moment to be
    /// gone (it frees its page cache), while the mount already fails with ENOTCONN, so liveness alone cannot tell.
    var faultFired: Bool {
        log.contains("Triggered fault condition") || !isAlive
    }

    /// The current mount's log.
    var log: String {
        (try? String(contentsOfFile: directory + "/lazyfs.log", encoding: .utf8)) ?? ""
    }

    /// What the current mount's fault persisted: LazyFS's "will persist N bytes from offset O" and "persist the
    /// write K" lines, shortened.
    var persistedParts: [String] {
        log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "[lazyfs.faults]: ") else { return nil }
            let text = line[range.upperBound...]
            guard text.contains("persist") else { return nil }
            return text.replacingOccurrences(of: root + "/", with: "")
        }
    }
}

/// A fault of LazyFS's config on one of the database's files. LazyFS counts writes as it receives them (the kernel
/// cuts an application's write at page boundaries when it does not start at one, so one WAL record can be two
/// writes).
enum LazyFSFault: CustomStringConvertible {
    /// torn-op: the `occurrence`-th write to `file` is cut into `parts` equal parts, the parts in `persist`
    /// (1-based) reach the backing file, the others are lost, and LazyFS dies (everything unsynced is lost).
    case tornOp(file: String, occurrence: Int, parts: Int, persist: [Int])
    /// torn-seq: in the `occurrence`-th run of two or more writes to `file` without an fsync between them, only the
    /// writes at the positions in `persist` reach the backing file; LazyFS dies after the last of them.
    case tornSeq(file: String, occurrence: Int, persist: [Int])

    var file: String {
        switch self {
        case let .tornOp(file, _, _, _), let .tornSeq(file, _, _): return file
        }
    }

    /// The `[[injection]]` entry (the path relative to the mount, under `@ROOT@`).
    var toml: String {
        switch self {
        case let .tornOp(file, occurrence, parts, persist):
            return "[[injection]]\ntype=\"torn-op\"\nfile=\"@ROOT@/db/\(file)\"\noccurrence=\(occurrence)\n"
                + "parts=\(parts)\npersist=[\(persist.map(String.init).joined(separator: ","))]\n"
        case let .tornSeq(file, occurrence, persist):
            return "[[injection]]\ntype=\"torn-seq\"\nop=\"write\"\nfile=\"@ROOT@/db/\(file)\"\noccurrence=\(occurrence)\n"
                + "persist=[\(persist.map(String.init).joined(separator: ","))]\n"
        }
    }

    var description: String {
        switch self {
        case let .tornOp(file, occurrence, parts, persist):
            return "torn-op on \(file): write #\(occurrence) in \(parts) parts, parts \(persist) persisted"
        case let .tornSeq(file, occurrence, persist):
            return "torn-seq on \(file): unsynced write run #\(occurrence), writes \(persist) persisted"
        }
    }
}

/// Counts over a harness's rounds, printed at the end.
struct LazyFSStats {
    var rounds = 0
    var faultsFired = 0
    var faultsNotFired = 0
    var checkpointKills = 0
    /// `normal` mode: acknowledged commits a power cut took back (allowed: the suffix since the last checkpoint).
    var rolledBack: UInt64 = 0
    var roundsWithRollback = 0
    /// Rounds in which the in-flight (unacknowledged) transaction was found committed.
    var inFlightKept = 0
    var childSelfExits: [String: Int] = [:]
}

/// The crash workload on a database inside a LazyFS mount, one durability mode. Every failure is recorded as an
/// issue naming the seed, round and fault; the harness stops at the first.
final class LazyFSHarness {
    let name: String
    let child: String
    let durability: Durability
    let seed: UInt64
    let workload: CrashWorkload
    let directory: String
    let lazyfs: LazyFSMount
    var databasePath: String { lazyfs.mountPoint + "/db" }
    private(set) var failed = false
    /// The last transaction in the database, as of the last verification.
    private(set) var committed: UInt64 = 0
    var generator: SplitMix64
    var stats = LazyFSStats()
    private let started = ContinuousClock.now

    /// How the child encrypts the database (`CrashEncryption`); opens here try its candidate keys.
    let encryption: CrashEncryption

    init(name: String, child: String, durability: Durability, seed: UInt64, encryption: CrashEncryption = .plain) throws {
        self.name = name
        self.encryption = encryption
        self.child = child
        self.durability = durability
        self.seed = seed
        workload = CrashWorkload(seed: seed)
        generator = SplitMix64(seed: seed ^ UInt64(Durability.allCases.firstIndex(of: durability)!) << 32)
        // Letters, digits and underscores only: FUSE options are comma-separated, and LazyFS ignores a config path
        // containing "-o".
        let slug = String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" }).replacingOccurrences(of: "__", with: "_")
        let path = NSTemporaryDirectory() + "boxwood-lazyfs-\(slug)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // LazyFS names files by their real path (the script resolves symbolic links too).
        directory = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        lazyfs = LazyFSMount(directory: directory)
    }

    /// Unmounts whatever is mounted; removes the directory unless a failure was recorded.
    func finish() {
        do {
            // Also when `mounted` is false: a failed mount script may have left a mount (unmounting nothing is a no-op).
            try lazyfs.unmount()
        } catch {
            fail("cleanup", "\(error)")
        }
        if !failed { try? FileManager.default.removeItem(atPath: directory) }
    }

    func fail(_ context: String, _ message: String) {
        failed = true
        let text = "LazyFSTests [\(name)] seed \(seed) (BOXWOOD_SEED=\(seed) replays it), \(context): \(message) "
            + "(files kept in \(directory))"
        Issue.record(Comment(rawValue: text))
    }

    /// Runs `body`, recording a LazyFS script failure as a test failure; false after one.
    func lazyfsStep(_ context: String, _ body: () throws(LazyFSError) -> Void) -> Bool {
        do {
            try body()
            return true
        } catch {
            fail(context, "\(error)")
            return false
        }
    }

    /// Spawns a child continuing after `committed` on the database in the mount and stops it as `stop` says (see
    /// ``CrashChildLauncher/run(after:transactions:stop:fail:)``). Nil after recording a failure.
    func runChild(_ stop: ChildStop, transactions: UInt64 = 1_000_000_000, context: String) -> ChildRun? {
        var launcher = CrashChildLauncher(executable: child, databasePath: databasePath, seed: seed, durability: durability,
                                          stderrPath: directory + "/child-stderr", stderrLimit: 2_000)
        launcher.encryption = encryption
        return launcher.run(after: committed, transactions: transactions, stop: stop) { fail(context, $0) }
    }

    /// Opens the database in-process and checks it: its last transaction m must be at least `floor` (every
    /// acknowledged commit in `full`; in `normal` what a completed checkpoint holds) and at most `acked + 1` (only
    /// the in-flight transaction besides), every table must hold exactly the model's entries after m — so what
    /// survived is a prefix of the commits, each whole — and `check()` must pass. Returns m and records it as
    /// ``committed``; nil after recording a failure.
    func verify(readOnly: Bool, acked: UInt64, floor: UInt64, context: String) -> UInt64? {
        let box: ValueBox
        do {
            box = try encryption.open(databasePath, options: ValueBoxOptions(durability: durability, readOnly: readOnly))
        } catch {
            fail(context, "\(readOnly ? "read-only" : "read-write") open after acknowledging \(acked) failed: \(error)")
            return nil
        }
        let m = check(box, acked: acked, floor: floor, context: context)
        do {
            try box.close()
        } catch {
            fail(context, "close after verifying: \(error)")
            return nil
        }
        guard let m else { return nil }
        if m < acked {
            stats.rolledBack += acked - m
            stats.roundsWithRollback += 1
        }
        if m == acked + 1 { stats.inFlightKept += 1 }
        committed = m
        return m
    }

    private func check(_ box: ValueBox, acked: UInt64, floor: UInt64, context: String) -> UInt64? {
        do {
            return try workload.verifyAfterCrash(box, acked: acked, floor: floor, fail: { fail(context, $0) }) { m in
                let promise = durability == .full ? "every acknowledged commit" : "every commit up to the last completed checkpoint (\(floor))"
                return "the database ends at transaction \(m) after \(acked) were acknowledged; expected \(promise) "
                    + "and at most the in-flight one (\(floor)...\(acked + 1))"
            }
        } catch {
            fail(context, "reading the database after acknowledging \(acked): \(error)")
            return nil
        }
    }

    /// Runs the next transaction in-process on the recovered database (it accepts writes) and closes, cuts the
    /// power (clear-cache) and verifies: `full` must keep it, `normal` may lose it.
    func commitInProcess(context: String) {
        let before = committed
        do {
            let box = try encryption.open(databasePath, options: ValueBoxOptions(durability: durability))
            try workload.run(before + 1, in: box)
            try box.close()
        } catch {
            fail(context, "committing transaction \(before + 1) in-process: \(error)")
            return
        }
        guard lazyfsStep(context, { () throws(LazyFSError) in try lazyfs.clearCache() }) else { return }
        _ = verify(readOnly: false, acked: before + 1, floor: durability == .full ? before + 1 : before, context: context)
    }

    /// One summary line.
    func summary(_ extra: String = "") -> String {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var parts = ["\(stats.rounds) rounds"]
        if stats.faultsFired + stats.faultsNotFired > 0 {
            parts.append("\(stats.faultsFired) faults fired, \(stats.faultsNotFired) did not (power cut by clear-cache instead)")
        }
        if stats.checkpointKills > 0 { parts.append("\(stats.checkpointKills) kills at a checkpoint announcement") }
        parts.append(durability == .full ? "acknowledged commits lost: 0"
                     : "acknowledged commits lost: \(stats.rolledBack) (allowed in normal: the suffix after the last checkpoint; in \(stats.roundsWithRollback) rounds)")
        parts.append("in-flight commit kept \(stats.inFlightKept)×")
        if !stats.childSelfExits.isEmpty {
            parts.append("child ends after LazyFS died: " + stats.childSelfExits.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: ", "))
        }
        parts.append("highest txn \(committed)")
        if !extra.isEmpty { parts.append(extra) }
        parts.append(String(format: "%.1f s", seconds))
        return "LazyFSTests [\(name)]: seed \(seed): " + parts.joined(separator: ", ")
    }
}

extension LazyFSTests {
    /// `BOXWOOD_SEED`, else a random seed.
    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["BOXWOOD_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
    }

    /// `BOXWOOD_LAZYFS_ROUNDS`, else `defaultRounds`.
    static func rounds(default defaultRounds: Int) -> Int {
        max(1, ProcessInfo.processInfo.environment["BOXWOOD_LAZYFS_ROUNDS"].flatMap { Int($0) } ?? defaultRounds)
    }

    /// The built crash child, or nil after recording an issue.
    static func crashChild() -> String? {
        guard let child = CrashChild.locate("boxwood-crash-child") else {
            Issue.record("boxwood-crash-child was not found; run `swift build` before `swift test` (or set BOXWOOD_CRASH_CHILD)")
            return nil
        }
        return child
    }
}
