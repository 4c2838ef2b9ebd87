import BoxwoodPlatform
import BoxwoodTestSupport
import Foundation
import SystemPackage
import Testing

/// A large account syncs in bounded memory (issue 26): `boxwood-large-account` syncs a synthetic account (every
/// dialog with its top message, page by page; deeper history stays a hole) into a fresh database and reports what
/// it stored and its peak resident set size. The default size is small and fast; `BOXWOOD_LARGE_ACCOUNT=1` runs the
/// full 5,000 chats × 2,000 messages. Only memory is bounded here, not time.
@Suite("Large account", .timeLimit(.minutes(30)))
struct LargeAccountTests {
    /// The bound on the run's peak resident set size.
    static let peakLimit: UInt64 = 200 << 20

    /// The account size: the full one when `BOXWOOD_LARGE_ACCOUNT=1`.
    static var size: (chats: Int, messages: Int) {
        ProcessInfo.processInfo.environment["BOXWOOD_LARGE_ACCOUNT"] == "1" ? (5_000, 2_000) : (200, 200)
    }

    /// The report line the binary prints.
    struct Report: Decodable {
        let chats: Int
        let chatsListed: Int
        let topMessagesStored: Int
        let messagesStored: Int
        let holesBelowTop: Int
        let seconds: Double
        let peakResidentBytes: UInt64
    }

    @Test func aLargeAccountSyncsEveryDialogInBoundedMemory() async throws {
        let executable = try #require(BuiltExecutable.locate("boxwood-large-account", override: "BOXWOOD_LARGE_ACCOUNT_BINARY"),
                                      "build the products first (swift build)")
        let directory = SyncTemporaryDirectory()
        let (chats, messages) = Self.size
        let output = directory.path + "/report.json"
        let errors = directory.path + "/stderr.txt"
        let spawned = try ChildProcess.spawn(executable: FilePath(executable),
                                             arguments: [directory.path, "--chats", "\(chats)", "--messages", "\(messages)"],
                                             standardInput: .nullDevice, standardOutput: .file(FilePath(output)),
                                             standardError: .file(FilePath(errors)))
        let termination = try await spawned.process.terminated()
        let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        try #require(termination == .exited(0), "\(termination): \(stderr.suffix(1_500))")
        let line = try String(contentsOfFile: output, encoding: .utf8)
        let report = try JSONDecoder().decode(Report.self, from: Data(line.utf8))
        print("large account \(chats) × \(messages): \(line)", terminator: "")

        #expect(report.chats == chats)
        #expect(report.chatsListed == chats, "every dialog is in the chat list")
        #expect(report.topMessagesStored == chats, "every chat's top message is stored")
        // Every dialog with its top message, nothing deeper: the rest of each chat is a hole until a view asks.
        #expect(report.messagesStored == chats)
        #expect(report.holesBelowTop == (messages > 1 ? chats : 0))
        #expect(report.peakResidentBytes > 0)
        #expect(report.peakResidentBytes < Self.peakLimit, "peak RSS \(report.peakResidentBytes >> 20) MiB")
    }
}
