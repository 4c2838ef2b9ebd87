import Testing
import Foundation
@testable import BoxwoodStore

/// Page rollback in an encrypted file: an attacker who can write the file puts back an older version of a page (one
/// that authenticated once, under the same key, at the same place). Each reference to a page carries the write tag
/// of the version it points at, and the tag is authenticated with the page, so the old version must be refused —
/// never served as the current contents.
@Suite struct EncryptionRollbackTests {
    let table = ValueBoxTable(id: 1, keyType: .binary)

    /// One round of changes: overwrites, removals and inserts chosen by `rng`, applied to the box and the model.
    func change(_ box: ValueBox, _ model: inout [Int: [UInt8]], round: Int, rng: inout SplitMix64) throws {
        try box.begin()
        for _ in 0..<250 {
            let i = rng.below(600)
            if rng.below(4) == 0 {
                try box.remove(table, key: EncryptionFixtures.key(i))
                model[i] = nil
            } else {
                let value = EncryptionFixtures.value(i &+ round &* 1000)
                try box.set(table, key: EncryptionFixtures.key(i), value: MemoryBuffer(value))
                model[i] = value
            }
        }
        try box.commit()
        try box.checkpoint()
    }

    /// Reads every key of `model` (and one past it) from a copy of the database whose data file is `data`: true when
    /// the damage was detected (a typed error), false when every answer was right; a wrong answer fails the test.
    func readCopy(data: [UInt8], wal: [UInt8], model: [Int: [UInt8]], what: String) throws -> Bool {
        let copy = temporaryDatabasePath("enc-rollback-copy")
        defer { removeItem(copy) }
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try writeFile(copy + "/data", data)
        try writeFile(copy + "/wal", wal)
        do {
            let box = try ValueBox(path: copy, options: EncryptionFixtures.options())
            defer { try? box.close() }
            for i in 0..<600 {
                let stored = try box.bytes(table, EncryptionFixtures.key(i))
                let right = stored == model[i]
                #expect(right, "\(what): key \(i) read \(stored.map { "\($0.count) bytes" } ?? "nothing"), expected \(model[i].map { "\($0.count) bytes" } ?? "nothing")")
                if !right { return false }
            }
            #expect(try box.count(table) == model.count, "\(what): count")
            return false
        } catch let error as BoxwoodError {
            #expect(["checksumMismatch", "corrupted"].contains(error.kind), "\(what): \(error)")
            return true
        }
    }

    /// A database at `path` taken through a first checkpoint (the old file) and three more (the current one): both
    /// files, the WAL, the model of the current contents, and the pages (metas excepted) whose bytes differ.
    struct Snapshots {
        let old: [UInt8]
        let current: [UInt8]
        let wal: [UInt8]
        let model: [Int: [UInt8]]
        let changed: [Int]

        static func offset(_ page: Int) -> Int { EncryptionHeader.size + page * PageCipher.slotSize }

        /// The current file with `pages` put back as they were in the old one.
        func rolledBack(_ pages: [Int]) -> [UInt8] {
            var bytes = current
            for page in pages { bytes.replaceSubrange(Self.offset(page)..<Self.offset(page + 1), with: old[Self.offset(page)..<Self.offset(page + 1)]) }
            return bytes
        }
    }

    func snapshots(at path: String, rng: inout SplitMix64) throws -> Snapshots {
        var model: [Int: [UInt8]] = [:]
        let box = try ValueBox(path: path, options: EncryptionFixtures.options())
        try change(box, &model, round: 0, rng: &rng)
        let old = try readFile(path + "/data")
        for round in 1...3 { try change(box, &model, round: round, rng: &rng) }
        try box.close()
        let current = try readFile(path + "/data")
        let pages = (min(old.count, current.count) - EncryptionHeader.size) / PageCipher.slotSize
        let offset = Snapshots.offset
        // Pages 0 and 1 are the metas: a whole older meta is a whole older database, which no file format can tell
        // from the real one without state kept elsewhere (docs/encryption.md).
        let changed = (2..<pages).filter { old[offset($0)..<offset($0 + 1)] != current[offset($0)..<offset($0 + 1)] }
        return Snapshots(old: old, current: current, wal: try readFile(path + "/wal"), model: model, changed: changed)
    }

    /// Snapshots the data file after a first checkpoint, changes the database through several more (so that pages
    /// freed by one are reused by the next with new contents), then puts back the first snapshot's version of each
    /// page whose bytes differ — one page at a time, and all of them at once. Each is refused or harmless.
    @Test(arguments: [false, true])
    func anOlderVersionOfAPageIsRefused(many: Bool) throws {
        let seed = crashTestSeed()
        print("EncryptionRollbackTests seed: \(seed) (replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let path = temporaryDatabasePath("enc-rollback")
        defer { removeItem(path) }
        let snapshots = try snapshots(at: path, rng: &rng)
        let changed = snapshots.changed
        #expect(changed.count > 10, "only \(changed.count) pages were rewritten in place")

        var detected = 0
        if many {
            if try readCopy(data: snapshots.rolledBack(changed), wal: snapshots.wal, model: snapshots.model,
                            what: "all \(changed.count) rewritten pages rolled back") { detected += 1 }
            #expect(detected == 1)
        } else {
            for page in changed {
                if try readCopy(data: snapshots.rolledBack([page]), wal: snapshots.wal, model: snapshots.model,
                                what: "page \(page) rolled back") { detected += 1 }
            }
            // A rewritten page may be free now (nothing reads it): most are in use.
            #expect(detected * 2 > changed.count, "only \(detected) of \(changed.count) rolled-back pages were detected")
        }
    }

    /// `check` (or the open, for a page it reads) names a rolled-back page: the version its parent does not point at.
    @Test func checkNamesARolledBackPage() throws {
        var rng = SplitMix64(seed: 7)
        let path = temporaryDatabasePath("enc-rollback-check")
        defer { removeItem(path) }
        let snapshots = try snapshots(at: path, rng: &rng)
        var named = 0
        for page in snapshots.changed {
            try writeFile(path + "/data", snapshots.rolledBack([page]))
            // Each try starts from the same files (closing a box may checkpoint).
            try writeFile(path + "/wal", snapshots.wal)
            // A page the open itself reads (the catalog, the freelist) is refused there, by its number.
            if try namedByOpenOrCheck(path: path, page: page) { named += 1 }
        }
        #expect(named > 3, "check named \(named) rolled-back pages")
    }

    /// Opens the database at `path` and checks it: true when the open's error or the check's report names `page`.
    private func namedByOpenOrCheck(path: String, page: Int) throws -> Bool {
        let box: ValueBox
        switch Result(catching: { () throws(BoxwoodError) in try ValueBox(path: path, options: EncryptionFixtures.options()) }) {
        case let .success(opened):
            box = opened
        case let .failure(error):
            #expect(error.kind == "checksumMismatch", "page \(page): \(error)")
            return "\(error)".contains("page \(page) ")
        }
        let report = try box.check()
        try box.close()
        return report.problems.contains { $0.contains("page \(page) ") }
    }
}
