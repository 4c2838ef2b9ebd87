import Boxwood
import BoxwoodPlatform
import BoxwoodStore
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `extension-memory` (boxwood only, Linux): what a notification extension pays to read a big database. The parent
/// builds a database of `sizes.extensionDatabaseBytes` — 1,000 messages in one chat through Postbox, the rest
/// 4 KiB filler values in a table of its own — then starts a fresh process (this executable,
/// `--extension-memory-child`) that opens it with Postbox and reads the 1,000 messages by id. The child reports
/// its private dirty memory (`/proc/self/smaps_rollup`: heap, stacks, written pages — not the clean shared mapping
/// of `data`) before opening and after reading, and its resident size. Ops are messages read; the note gives the
/// dirty-memory growth, the row's figure to hold under 20 MiB.
extension Bench {
    static let extensionChat = PeerId(namespace: PeerId.Namespace(0), id: PeerId.Id(4242))
    static let extensionMessages: Int32 = 1_000

    func extensionMemory() throws(BenchError) -> Measurement {
        let workload = WorkloadID.extensionMemory.rawValue
        func failure(_ detail: String) -> BenchError { .verification(engine: .boxwood, workload: workload, detail: detail) }
        guard FileSystemCalls.kind(of: "/proc/self/smaps_rollup") != nil else { return Measurement(row: workload, engine: .boxwood, ops: 0, seconds: 1, note: "no /proc/self/smaps_rollup here: not measured") }
        let directory = root + "/boxwood-extension-memory"
        removeTree(directory)
        let target = sizes.extensionDatabaseBytes
        try runAsync { () async throws in
            let postbox = try await Postbox.open(path: directory)
            try await postbox.transaction { tx in
                let messages = (1...Self.extensionMessages).map { n in
                    StoreMessage(id: .id(MessageId(peerId: Self.extensionChat, namespace: 0, id: n)), timestamp: 1_700_000_000 + n,
                                 flags: [.incoming], authorId: Self.extensionChat, text: "message \(n): " + String(repeating: "lorem ipsum ", count: 12))
                }
                _ = try tx.addMessages(messages, location: .upperHistoryBlock)
            }
            try await postbox.close()
        }
        // Filler up to the target size, 4 KiB incompressible values, 16 MiB per transaction.
        do throws(BoxwoodError) {
            let box = try ValueBox(path: directory)
            let filler = ValueBoxTable(id: 9_999, keyType: .int64)
            let values = randomValues
            var written = 0
            var n: Int64 = 0
            while written < target {
                try box.begin()
                for _ in 0..<4_096 {
                    let value = MemoryBuffer(copying: values.value(Int(n), version: 1, length: 4_096))
                    try box.set(filler, key: ValueBoxKey(int64: n), value: value)
                    n += 1
                    written += value.length
                }
                try box.commit()
            }
            try box.close()
        } catch {
            throw .boxwood(error)
        }
        let size = ["data", "wal"].compactMap { fileSize(directory + "/" + $0) }.reduce(0, +)
        let executable: FilePath
        do { executable = try CurrentProcess.executablePath() } catch { throw .io(operation: "executable path", path: "", errno: error.rawValue) }
        let report: String
        do {
            var spawned = try ChildProcess.spawn(executable: executable, arguments: ["--extension-memory-child", directory],
                                                 standardInput: .nullDevice, standardOutput: .pipe)
            guard let output = spawned.standardOutput.take() else { throw failure("no pipe") }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try output.descriptor.read(into: $0, retryOnInterrupt: true) }
                if count == 0 { break }
                bytes += chunk[..<count]
            }
            let termination = try spawned.process.wait()
            guard termination == .exited(0) else { throw failure("the reading child ended with \(termination)") }
            report = String(decoding: bytes, as: UTF8.self)
        } catch let error as BenchError {
            throw error
        } catch {
            throw failure("\(error)")
        }
        removeTree(directory)
        // "dirtyBefore dirtyAfter rss seconds messages" in KiB.
        let fields = report.split(separator: " ").map { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard fields.count == 5, let before = fields[0], let after = fields[1], let rss = fields[2], let seconds = fields[3],
              let messages = fields[4], messages == Double(Self.extensionMessages) else { throw failure("child report '\(report)'") }
        // The goal of issue 20: a notification extension dies near 24 MiB; reading must stay under 20 MiB of dirty
        // memory besides the clean mapping.
        guard after - before < 20 * 1024 else {
            throw failure("reading grew private dirty memory by \(fixed((after - before) / 1024, 1)) MiB, over the 20 MiB goal")
        }
        return Measurement(row: workload, engine: .boxwood, ops: Int(messages), seconds: seconds,
                           note: "database \(formatBytes(size)): open + read 1,000 messages in a fresh process grew private dirty memory by \(fixed((after - before) / 1024, 1)) MiB (\(fixed(before / 1024, 1)) → \(fixed(after / 1024, 1)) MiB; resident \(fixed(rss / 1024, 1)) MiB, the clean mapping included)")
    }
}

/// The child of `extension-memory`: prints "dirtyBeforeKiB dirtyAfterKiB rssKiB seconds messagesRead".
func runExtensionMemoryChild(directory: String) -> Int32 {
    do {
        let before = smapsRollup("Private_Dirty")
        let watch = Stopwatch()
        let read = try runAsync { () async throws -> Int in
            let postbox = try await Postbox.open(path: directory)
            let count = try await postbox.transaction { tx in
                var found = 0
                for n in 1...Bench.extensionMessages where try tx.getMessage(MessageId(peerId: Bench.extensionChat, namespace: 0, id: n)) != nil {
                    found += 1
                }
                return found
            }
            try await postbox.close()
            return count
        }
        let seconds = watch.seconds
        let after = smapsRollup("Private_Dirty")
        print("\(before) \(after) \(smapsRollup("Rss")) \(seconds) \(read)")
        return 0
    } catch {
        printError("extension-memory child: \(error)")
        return 1
    }
}

/// A field of /proc/self/smaps_rollup in KiB (0 when missing).
private func smapsRollup(_ field: String) -> Int {
    guard let owner = try? FileSystemCalls.openFile("/proc/self/smaps_rollup", create: false, readOnly: true) else { return 0 }
    var bytes = [UInt8](repeating: 0, count: 4_096)
    let count = (try? bytes.withUnsafeMutableBytes { try owner.descriptor.read(into: $0) }) ?? 0
    let text = String(decoding: bytes[..<count], as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
    return 0
}
