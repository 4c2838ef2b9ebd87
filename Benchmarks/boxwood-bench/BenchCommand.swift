import ArgumentParser

/// `boxwood-bench`: times Boxwood against SQLite (configured as Telegram's Postbox), LMDB and a raw mmap'ed file on
/// the same workloads and data, prints a table (ops/s per engine, Boxwood's ratio to each) and optionally JSON.
/// Exit status 0 when every engine ran and passed verification, 1 on any failure, 64 on bad usage.
@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boxwood-bench",
        abstract: "Benchmark Boxwood against SQLite (Postbox configuration), LMDB and a raw mmap'ed file.",
        discussion: "Workloads, in the order they run:\n"
            + WorkloadID.allCases.map { "  \($0.rawValue): \($0.summary)" }.joined(separator: "\n")
    )

    @Option(help: "Number of keys (default 1,000,000; 100,000 with --quick; 4,000 with --smoke).")
    var keys: Int?

    @Flag(help: "About 100,000 keys and fewer operations: the whole run takes under a minute.")
    var quick = false

    @Flag(help: "A few thousand operations per workload, for CI.")
    var smoke = false

    @Option(help: "Where to create the scratch directory (a fresh boxwood-bench.XXXXXX inside it, removed at the end).")
    var dir = "/tmp"

    @Option(help: "Also write the results to this file as JSON.")
    var json: String?

    @Option(help: "Comma-separated workloads to run (default: all).")
    var only: String?

    @Option(help: "Comma-separated engines to run: boxwood, sqlite, lmdb, mmap, boxwood-enc (default: all but boxwood-enc).")
    var engines: String?

    @Flag(help: "Also run Boxwood on an encrypted database (the boxwood-enc column; its ratio column is the cost of encryption). SQLCipher is not available here: SQLite runs without a cipher.")
    var encrypted = false

    @Option(help: "Seed of every random choice (keys, values, operations).")
    var seed: UInt64 = 42

    @Option(help: ArgumentHelp(
        "Boxwood's dirty-memory checkpoint threshold in MiB (default: the library's, 64).",
        discussion: "Shows the memory-for-write-throughput trade: a larger budget means fewer checkpoints and fewer bytes synced."))
    var boxwoodCheckpointMemory: Int?

    @Option(help: ArgumentHelp(
        "The encrypted column's decrypted-page cache in MiB (default: the library's, 64).",
        discussion: "Reads of pages outside the cache decrypt them again: a cache that holds the working set makes reads cost what plain ones do."))
    var boxwoodDecryptedCache: Int?

    @Option(help: ArgumentHelp(
        "Boxwood's ValueBoxOptions.compressionLimit in bytes; -1 (write --boxwood-compression-limit=-1): no limit, the earlier policy (default: the library's, 1000).",
        discussion: "Values longer than the limit are stored uncompressed: reads lend or copy them instead of decompressing."))
    var boxwoodCompressionLimit: Int?

    @Option(help: .hidden) var externalCommitChild: String?
    @Option(help: .hidden) var extensionMemoryChild: String?

    @Flag(help: "Instead of the workloads: time the LZ4 block codecs, BoxwoodLZ4 against liblz4 (honours --quick, --smoke, --seed).")
    var lz4Codec = false

    func validate() throws {
        if quick && smoke { throw ValidationError("--quick and --smoke exclude each other") }
        if let keys, keys < 1_000 || keys > 100_000_000 { throw ValidationError("--keys must be between 1,000 and 100,000,000") }
        if let mib = boxwoodDecryptedCache, mib < 0 || mib > 65_536 {
            throw ValidationError("--boxwood-decrypted-cache must be between 0 and 65,536 MiB")
        }
        if let mib = boxwoodCheckpointMemory, mib < 1 || mib > 16_384 {
            throw ValidationError("--boxwood-checkpoint-memory must be between 1 and 16,384 MiB")
        }
        _ = try selectedWorkloads()
        _ = try selectedEngines()
    }

    func run() throws {
        if let externalCommitChild { throw ExitCode(runExternalCommitChild(directory: externalCommitChild)) }
        if let extensionMemoryChild { throw ExitCode(runExtensionMemoryChild(directory: extensionMemoryChild)) }
        let watch = Stopwatch()
        let profile: Profile = smoke ? .smoke : quick ? .quick : .full
        if lz4Codec {
            do { try LZ4CodecBench.run(profile: profile, seed: seed) } catch { printError(error.description); throw ExitCode.failure }
            return
        }
        let sizes = BenchSizes(profile: profile, keys: keys ?? profile.defaultKeys)
        let workloads = try selectedWorkloads()
        let engines = try selectedEngines()
        BoxwoodBenchSettings.checkpointMemoryBytes = boxwoodCheckpointMemory.map { $0 << 20 }
        BoxwoodBenchSettings.decryptedPageCacheBytes = boxwoodDecryptedCache.map { $0 << 20 }
        BoxwoodBenchSettings.compressionLimit = boxwoodCompressionLimit.map { $0 < 0 ? Int.max : $0 }
        do {
            try makeDirectory(dir)
            let root = try makeScratchDirectory(in: dir)
            defer { removeTree(root) }
            print("boxwood-bench (\(profile.rawValue) profile, seed \(seed))")
            for line in MachineInfo(benchDirectory: root).lines + sizes.lines { print(line) }
            print("durability (every workload runs with normal except single-full and latency-single-full):")
            for line in durabilityMapping { print("  " + line) }
            if let mib = boxwoodCheckpointMemory {
                print("  boxwood checkpointMemoryBytes = \(mib) MiB (--boxwood-checkpoint-memory; the default is 64 MiB)")
            }
            if let bytes = boxwoodCompressionLimit {
                print("  boxwood compressionLimit = \(bytes < 0 ? "none (every value from 256 bytes is compressed)" : "\(bytes) bytes") (--boxwood-compression-limit; the default is the library's)")
            }
            if let mib = boxwoodDecryptedCache {
                print("  boxwood-enc decryptedPageCacheBytes = \(mib) MiB (--boxwood-decrypted-cache; the default is 64 MiB)")
            }
            print("timing: write workloads from the first operation to the end of close (deferred checkpoints and syncs count); read workloads after an untimed warm-up scan, without open and close; latency-* rows: the sum of their timed commits, without open and close")
            print("")
            let bench = Bench(sizes: sizes, root: root, seed: seed)
            let report = Report(engines: engines)
            report.printTableHeader()
            for workload in workloads {
                var measurements: [Measurement] = []
                for engine in engines { measurements += try bench.run(workload, on: engine) }
                try report.add(measurements)
            }
            report.printSizes()
            report.printLatency()
            if let json { try writeTextFile(json, report.json()) }
            print("")
            print("total: \(fixed(watch.seconds, 1)) s")
        } catch {
            printError(error.description)
            throw ExitCode.failure
        }
    }

    private func selectedWorkloads() throws -> [WorkloadID] {
        guard let only else { return WorkloadID.allCases }
        let names = only.split(separator: ",").map(String.init)
        for name in names where WorkloadID(rawValue: name) == nil {
            throw ValidationError("unknown workload '\(name)'; workloads: " + WorkloadID.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return WorkloadID.allCases.filter { names.contains($0.rawValue) }
    }

    private func selectedEngines() throws -> [EngineKind] {
        guard let engines else { return EngineKind.allCases.filter { encrypted || $0 != .boxwoodEncrypted } }
        let names = engines.split(separator: ",").map(String.init)
        for name in names where EngineKind(rawValue: name) == nil {
            throw ValidationError("unknown engine '\(name)'; engines: " + EngineKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return EngineKind.allCases.filter { names.contains($0.rawValue) || (encrypted && $0 == .boxwoodEncrypted) }
    }
}
