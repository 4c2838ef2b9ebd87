// boxwood-crash-child <dbPath> <seed> <full|normal|off> <firstTxn> <txnCount> [plain|encrypted|rekeying]
//
// The victim of the kill-and-reopen crash test (Tests/BoxwoodCrashTests): runs transactions
// firstTxn..<firstTxn+txnCount of the crash workload with tiny checkpoint thresholds and reports progress on
// stdout, one unbuffered line per transaction, written right after `commit()` returned:
//
//     A <n>   transaction n is committed
//     C <n>   transaction n is committed and an explicit checkpoint starts now
//     B <n>   transaction n is committed and a background checkpoint is being written now (the next commits
//             go on meanwhile)
//
// `encrypted` opens the database under `CrashEncryption.first`; `rekeying` opens it under whichever of the two
// test keys opens it and, where the workload checkpoints, rekeys it to the other key instead (announced with `C n`,
// so that kills land inside the rekey).
//
// On an error it writes `E <description>` to stderr and exits 3; when done it closes the box and exits 0.

import BoxwoodCrashWorkload
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif


let arguments = CommandLine.arguments
guard arguments.count == 6 || arguments.count == 7, let seed = UInt64(arguments[2]),
      let durability = Durability(rawValue: arguments[3]), let first = UInt64(arguments[4]), first > 0,
      let count = UInt64(arguments[5]),
      let encryption = arguments.count == 7 ? CrashEncryption(rawValue: arguments[6]) : .plain else {
    emit(2, "usage: boxwood-crash-child <dbPath> <seed> <full|normal|off> <firstTxn >= 1> <txnCount> [plain|encrypted|rekeying]\n")
    exit(2)
}

let workload = CrashWorkload(seed: seed)
var options = ValueBoxOptions(durability: durability)
options.checkpointWALBytes = 64 << 10
options.checkpointMemoryBytes = 1 << 20

do throws(BoxwoodError) {
    let box = try encryption.open(arguments[1], options: options)
    for n in first..<first + count {
        try workload.run(n, in: box)
        if workload.checkpointsAfter(n) {
            emit(1, "C \(n)\n")
            if let target = encryption.rekeyTarget(current: box) { try box.rekey(to: target) } else { try box.checkpoint() }
        } else if box.isCheckpointingInBackground {
            emit(1, "B \(n)\n")
        } else {
            emit(1, "A \(n)\n")
        }
    }
    try box.close()
} catch {
    emit(2, "E \(error)\n")
    exit(3)
}
exit(0)
