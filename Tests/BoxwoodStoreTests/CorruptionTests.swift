import Foundation
import Testing
import BoxwoodCrashWorkload
@testable import BoxwoodStore
import BoxwoodStoreTesting

// Bit rot and stray writes: random bit flips and random sector overwrites in the data file and the WAL of
// a database with history (checkpointed pages, free pages, a WAL holding acknowledged commits). After each
// injected corruption the database must either open and return every acknowledged transaction intact, or
// refuse with a typed error naming the damaged file — at open or at the first read of the damaged page. It
// must never trap, hang, or return wrong data. The one exception is the WAL's last record: damage there, with no
// intact record after it, is indistinguishable from a torn append and is cut off as one (reported in
// `lastRecovery`); damage in any earlier record is refused, because the records after it were acknowledged.
//
//     BOXWOOD_SEED=<seed> swift test --filter CorruptionTests
//     BOXWOOD_CORRUPTIONS=100000 swift test --filter CorruptionTests

@Suite struct CorruptionTests {
    static let path = "/db"

    /// On a plain database (1000 corruptions by default) and an encrypted one (a third as many): a damaged page or
    /// record of either is refused by name or harmless, never a wrong answer.
    @Test(arguments: [false, true])
    func injectedCorruptionIsDetectedOrHarmless(encrypted: Bool) throws {
        let seed = crashTestSeed()
        let corruptions = environmentCount("BOXWOOD_CORRUPTIONS", default: 1000) / (encrypted ? 3 : 1)
        print("CorruptionTests seed: \(seed) (\(corruptions) corruptions\(encrypted ? ", encrypted" : ""); replay with BOXWOOD_SEED=\(seed))")
        var rng = SplitMix64(seed: seed)
        let workload = CrashWorkload(seed: seed)
        var options = crashTestOptions(.full)
        options.encryption = encrypted ? CrashEncryption.first : nil

        // A database with history, left as a killed process leaves it (the WAL holds the latest commits).
        let origin = SimulatedDisk(seed: rng.next())
        let box = try ValueBox(path: Self.path, options: options, fileSystem: origin)
        var acknowledged: UInt64 = 0
        var recordStarts: [UInt64: Int] = [:]  // commit → where its WAL record starts
        while acknowledged < 260 || box.wal!.size < 4096 {
            acknowledged += 1
            recordStarts[acknowledged] = Int(box.wal!.size)
            try workload.run(acknowledged, in: box)
        }
        let dataSize = origin.contents(of: Self.path + "/data")!.count
        let walSize = origin.contents(of: Self.path + "/wal")!.count

        var harmless = 0, refusedAtOpen = 0, refusedAtRead = 0, lastRecordCut = 0
        var byFile = ["data": 0, "wal": 0]
        for trial in 1...corruptions {
            let disk = try origin.afterProcessKill()
            let name = rng.chance(0.65) ? "data" : "wal"
            let file = Self.path + "/" + name
            let size = name == "data" ? dataSize : walSize
            let description: String
            let damage: Range<Int>
            if rng.chance(0.5) {
                let offset = rng.below(size)
                damage = offset..<(offset + 1)
                let original = disk.contents(of: file)![offset]
                let bit = UInt8(1) << UInt8(rng.below(8))
                disk.damage(file, offset: offset, bytes: [original ^ bit])
                description = "bit flip in \(name) at \(offset)"
            } else {
                let sector = rng.below((size + 511) / 512)
                let length = min(512, size - sector * 512)
                disk.damage(file, offset: sector * 512, bytes: rng.bytes(length))
                damage = (sector * 512)..<(sector * 512 + length)
                description = "random sector \(sector) of \(name)"
            }
            let context = "seed \(seed), trial \(trial): \(description)"
            byFile[name]! += 1

            let opened: ValueBox
            do {
                opened = try ValueBox(path: Self.path, options: options, fileSystem: disk)
            } catch {
                if expectNamesFile(error, file, context) { refusedAtOpen += 1 }
                continue
            }
            do {
                let m = try (workload.lastApplied(opened) ?? .max)
                // Cut as a torn tail: the first damaged record and everything after it, allowed only when the
                // damage reaches the last record (no intact record follows it).
                if name == "wal", m < acknowledged, let cutStart = recordStarts[m + 1],
                   damage.upperBound > recordStarts[acknowledged]!,
                   let report = opened.lastRecovery, report.tornTailOffset == UInt64(cutStart),
                   recordStarts[m + 2].map({ damage.lowerBound < $0 }) ?? true {
                    lastRecordCut += 1
                    if let difference = try workload.difference(opened, after: m) {
                        Issue.record("\(context): wrong data returned after cutting the last record: \(difference)")
                    }
                    continue
                }
                if m != acknowledged {
                    Issue.record("\(context): opened at transaction \(m) of \(acknowledged) acknowledged — lost or invented data")
                    continue
                }
                if let difference = try workload.difference(opened, after: m) {
                    Issue.record("\(context): wrong data returned: \(difference)")
                    continue
                }
                harmless += 1
            } catch {
                if expectNamesFile(error, file, context) { refusedAtRead += 1 }
            }
        }
        #expect(harmless + refusedAtOpen + refusedAtRead + lastRecordCut == corruptions)
        print("CorruptionTests\(encrypted ? " (encrypted)" : ""): \(corruptions) corruptions (data \(byFile["data"]!), wal \(byFile["wal"]!)): \(harmless) harmless, \(refusedAtOpen) refused at open, \(refusedAtRead) refused at the first read of the damage, \(lastRecordCut) damaged WAL tails (the last record or two) cut as a torn tail, 0 wrong answers")
        try box.close()
    }

    /// True when `error` is a corruption error naming `file`; records an issue otherwise.
    private func expectNamesFile(_ error: Error, _ file: String, _ context: String) -> Bool {
        switch error as? BoxwoodError {
        case let .checksumMismatch(damaged, _, _)?, let .corrupted(damaged, _, _)?:
            if damaged == file { return true }
            Issue.record("\(context): the error names \(damaged): \(error)")
        case let .unsupportedFormatVersion(damaged, _, _)? where damaged == file:
            // A flipped bit in a meta page's version field (its checksum would also fail).
            return true
        default:
            Issue.record("\(context): expected a corruption error, got \(error)")
        }
        return false
    }
}
