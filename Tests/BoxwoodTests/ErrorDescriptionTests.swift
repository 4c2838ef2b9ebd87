import Boxwood
import BoxwoodStore
import Foundation
import Testing

/// Issue 23, item 5: errors read well in an app's UI and log. Every `BoxwoodError` and `PostboxError` is a
/// `LocalizedError` whose `localizedDescription` explains it (not "BoxwoodStore.BoxwoodError error 6") and names
/// the file or directory concerned.
@Suite("Error descriptions")
struct ErrorDescriptionTests {
    static let database = "/apps/chat/account.db"

    /// errno values, the same on Linux and Darwin.
    enum Errno {
        static let notPermitted: Int32 = 1, ioError: Int32 = 5, permissionDenied: Int32 = 13, noSpace: Int32 = 28, readOnlyFileSystem: Int32 = 30
    }

    /// One error of every case, each with the path it should name (nil: the case concerns no file).
    static let everyEngineError: [(BoxwoodError, String?)] = {
        let cases: [BoxwoodError] = [
            .keyTooLarge(length: 5000, limit: 1024),
            .invalidInt64Key(length: 3),
            .notABoxwoodDatabase(path: database, reason: "no data file"),
            .unsupportedFormatVersion(path: database + "/data", found: 9, supported: 1),
            .unsupportedFormatVersion(path: database + "/wal", found: 0, supported: 4),
            .checksumMismatch(file: database + "/data", page: 17, offset: 69632),
            .checksumMismatch(file: database + "/wal", page: nil, offset: 4096),
            .corrupted(file: database + "/data", page: 3, reason: "bad page type 9"),
            .corrupted(file: database + "/wal", page: nil, reason: "record length past the end"),
            .io(operation: "open", path: database + "/data", errno: Errno.permissionDenied),
            .io(operation: "open", path: database + "/data", errno: Errno.notPermitted),
            .io(operation: "pwrite", path: database + "/wal", errno: Errno.readOnlyFileSystem),
            .io(operation: "pwrite", path: database + "/wal", errno: Errno.noSpace),
            .io(operation: "fsync", path: database + "/data", errno: Errno.ioError),
            .keyTypeMismatch(table: 7, existing: "binary", requested: "int64"),
            .noActiveTransaction,
            .transactionAlreadyActive,
            .lockTimeout(path: database + "/header", seconds: 2),
            .readerSlotsFull(path: database + "/header", slots: 126),
            .incompatibleLockScheme(path: database),
            .closed,
            .suspended(path: database),
            .transactionTooLarge(bytes: 5_000_000_000, limit: 4_294_967_295),
            .outOfBounds(offset: 10, length: 20, valueLength: 12),
            .readOnly(path: database),
            .invalidFullTextTable(id: -1),
            .fullTextLayoutMismatch(path: database, id: 41, found: 1, supported: 2),
            .reservedTableId(id: -3),
            .symbolicLink(path: database + "/data"),
            .compactionFileBlocked(path: database + "/data.compact"),
            .destinationExists(path: "/backups/account.db"),
            .encryptionKeyRequired(path: database + "/data"),
            .wrongKey(path: database + "/data"),
            .cryptographyFailed(operation: "sealing page 7", reason: "invalid parameter"),
        ]
        return cases.map { ($0, path(of: $0)) }
    }()

    /// The path an error is about, with the exhaustive switch that makes a new case a compile error here until
    /// it is added to the list above.
    static func path(of error: BoxwoodError) -> String? {
        switch error {
        case let .notABoxwoodDatabase(path, _), let .unsupportedFormatVersion(path, _, _), let .io(_, path, _),
             let .incompatibleLockScheme(path), let .suspended(path), let .readOnly(path), let .symbolicLink(path),
             let .compactionFileBlocked(path), let .destinationExists(path), let .fullTextLayoutMismatch(path, _, _, _):
            return path
        case let .checksumMismatch(file, _, _), let .corrupted(file, _, _):
            return file
        case .lockTimeout, .readerSlotsFull, .encryptionKeyRequired, .wrongKey:
            return database   // the database directory, not its header or data file
        case .keyTooLarge, .invalidInt64Key, .keyTypeMismatch, .noActiveTransaction, .transactionAlreadyActive, .closed,
             .transactionTooLarge, .outOfBounds, .invalidFullTextTable, .reservedTableId, .cryptographyFailed:
            return nil
        }
    }

    /// "error 6", "error 28": the text Foundation makes up for an error that explains nothing.
    static func hasBareErrorNumber(_ text: String) -> Bool {
        text.range(of: #"error \d"#, options: .regularExpression) != nil
    }

    @Test("every BoxwoodError case has a localized description that explains it and names its path")
    func everyEngineErrorIsLocalized() {
        for (error, path) in Self.everyEngineError {
            let text = error.localizedDescription
            #expect(!text.isEmpty, "\(error)")
            #expect(!Self.hasBareErrorNumber(text), "\(error): \(text)")
            #expect(!text.contains("BoxwoodError"), "\(error): \(text)")
            #expect(text.first?.isLowercase == false && text.hasSuffix("."), "a sentence: \(text)")
            if let path { #expect(text.contains(path), "\(error) names \(path): \(text)") }
            #expect(error.explanation.place == path, "\(error)")
        }
    }

    @Test("the explanation splits what is wrong from what to do, and places damage in its page")
    func explanationParts() {
        let full = BoxwoodError.io(operation: "pwrite", path: Self.database + "/wal", errno: Errno.noSpace)
        #expect(full.explanation.problem == "cannot pwrite: the disk is full (errno \(Errno.noSpace))")
        #expect(full.explanation.recoverySuggestion == "nothing committed is lost, free some space and retry")
        #expect(full.explanation.line == "cannot pwrite: the disk is full (errno \(Errno.noSpace)); nothing committed is lost, free some space and retry (\(Self.database)/wal)")
        #expect(full.recoverySuggestion == "Nothing committed is lost, free some space and retry.")

        let other = BoxwoodError.io(operation: "fsync", path: Self.database + "/data", errno: Errno.ioError)
        #expect(other.explanation.problem == "I/O error: fsync failed: Input/output error (errno 5)", "the system's message")

        let damaged = BoxwoodError.checksumMismatch(file: Self.database + "/data", page: 17, offset: 69632)
        #expect(damaged.explanation.page == 17)
        #expect(damaged.explanation.recoverySuggestion?.contains("backup") == true)
        #expect(!damaged.explanation.line.contains("boxwood check"), "no command-line advice in the library")

        let locked = BoxwoodError.lockTimeout(path: Self.database + "/header", seconds: 0.25)
        #expect(locked.explanation.problem.hasPrefix("another process has held the write lock for more than 0.25 s."))
        #expect(!locked.explanation.line.contains("--lock-timeout"), "no command-line advice in the library")
        #expect(BoxwoodError.closed.recoverySuggestion == nil)
    }

    @Test("every PostboxError case has a localized description without an error number")
    func everyPostboxErrorIsLocalized() {
        let errors: [PostboxError] = [.transactionEnded, .newerUserVersion(found: 5, supported: 3), .noUpgradePath(from: 1, to: 3),
                                      .invalidUpgrade(from: 2, to: 2), .closed, .suspended]
        for error in errors {
            let text = error.localizedDescription
            #expect(!text.isEmpty && !Self.hasBareErrorNumber(text) && !text.contains("PostboxError"), "\(error): \(text)")
            #expect(text == error.explanation.problemSentence)
        }
        #expect(PostboxError.newerUserVersion(found: 5, supported: 3).localizedDescription
                == "Postbox schema version 5 is newer than this build supports (version 3).")
        #expect(PostboxError.suspended.recoverySuggestion == "Call resume() first.")
    }

    @Test("coding and table errors are localized too")
    func otherPostboxLayerErrorsAreLocalized() {
        let errors: [any Error] = [
            PostboxDecodingError.truncated(offset: 4, needed: 8, available: 2), PostboxDecodingError.unknownType(hash: 77, key: "m", knownType: nil),
            PostboxEncodingError.codable("bad"), HistoryTableError.corrupt(table: 7, reason: "short key"),
            HistoryTableError.messageNotFound(MessageId(peerId: PeerId(1), namespace: 0, id: 5)),
            PeerOperationLogError.danglingMergedIndex(tag: PeerOperationLogTag(1), mergedIndex: 4),
        ]
        for error in errors {
            let text = error.localizedDescription
            #expect(!text.isEmpty && !Self.hasBareErrorNumber(text) && text.hasSuffix("."), "\(error): \(text)")
        }
        #expect((PostboxDecodingError.unknownType(hash: 77, key: "m", knownType: nil) as any LocalizedError).recoverySuggestion?.contains("declareEncodable") == true)
    }
}
