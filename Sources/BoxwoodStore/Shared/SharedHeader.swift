import Atomics
import BoxwoodPlatform

/// The shared header: the first bytes of the coordination file `header`, mapped by every process that has
/// the database open. It caches what a process needs to know about the others without reading the data
/// files — above all ``transactionStateVersion`` — and holds the reader slots. It is volatile: every value
/// in it can be rebuilt from `data` and `wal`, and open rebuilds it when it is missing, damaged or stale.
///
/// Layout (little-endian, 8-byte aligned words, updated with atomic operations):
///
///     0    8  magic            "BXWDHDR\0"
///     8    4  version          2
///     12   4  pageSize         4096
///     16   8  seqlock          odd while the writer updates the published state (24..<72)
///     24   8  generation       checkpoint generation of the newest meta page
///     32   8  walSalt          salt of the WAL those commits are in
///     40   8  version          TransactionStateVersion of the last published commit
///     48   8  walEnd           end offset of that commit's record in the WAL
///     56   8  masterClientId   MasterClientId as of that commit (0 = none)
///     64   8  checksum         XXH64 of bytes 24..<64; a mismatch means the header is damaged
///     72   8  writerState      0 = the files match the published state; 1 = a writer is changing them
///     80   4  commitSignal     +1 after every publish: the word waiters for other processes' commits sleep on
///     84   4  commitWaiters    threads (in any process) sleeping on commitSignal; publishers wake them when > 0
///     88   4  writerReleases   +1 whenever the writer lock is released: the word lock waiters sleep on
///     92   4  writerWaiters    threads waiting for the writer lock
///     96   8  writerHolder     identity of the writer lock's holder while held, else 0 (for diagnostics: tools
///                              read it to tell whether a live process is writing, without touching the lock)
///     104  8  intactLogBoot    digest of the boot in which a writer last found the WAL intact (0 = none): while
///                              it is the running boot, damage followed by an intact record cannot be a lost write
///     128  64 × 126 reader slots (see ``ReaderSlots``)
///
/// Version 2 holds no lock outside a write transaction: the writer lock is a `flock` on the file (see
/// ``CoordinationFile``) and reader slots are claimed by compare-and-swap. Version 1 locked byte ranges past the
/// mapping instead (``version1LockBase``); a version-1 header is rebuilt as version 2, unless a version-1 process
/// still has the database open (``BoxwoodError/incompatibleLockScheme(path:)``).
final class SharedHeader {
    static let size = 8192
    static let magic: [UInt8] = Array("BXWDHDR\0".utf8)
    static let version: UInt32 = 2
    static let slotsOffset = 128
    static let slotSize = 64
    static let slotCount = (size - slotsOffset) / slotSize
    /// Where version 1 kept its byte-range locks: the writer lock at the base, reader slot i at base + 64 + i.
    static let version1LockBase: UInt64 = 1 << 20
    static let version1LockSpan: UInt64 = 64 + UInt64(slotCount)
    static let commitSignalOffset = 80
    static let commitWaitersOffset = 84
    static let writerReleasesOffset = 88
    static let writerWaitersOffset = 92
    static let writerHolderOffset = 96
    static let intactLogBootOffset = 104

    /// The state a commit publishes.
    struct Published: Equatable {
        var generation: UInt64
        var walSalt: UInt64
        var version: UInt64
        var walEnd: UInt64
        var masterClientId: Int64
    }

    let file: CoordinationFile
    let base: UnsafeMutableRawPointer

    init(file: CoordinationFile) {
        self.file = file
        self.base = file.memory
    }

    @inline(__always)
    func word(_ offset: Int) -> UnsafeAtomic<UInt64> {
        UnsafeAtomic<UInt64>(at: (base + offset).assumingMemoryBound(to: UInt64.AtomicRepresentation.self))
    }

    @inline(__always)
    func word32(_ offset: Int) -> UnsafeAtomic<UInt32> {
        UnsafeAtomic<UInt32>(at: (base + offset).assumingMemoryBound(to: UInt32.AtomicRepresentation.self))
    }

    /// The address of the 32-bit word at `offset`, for kernel waits.
    @inline(__always)
    func address32(_ offset: Int) -> UnsafeMutablePointer<UInt32> {
        (base + offset).assumingMemoryBound(to: UInt32.self)
    }

    /// True when magic, version and page size are this build's.
    var hasValidIdentity: Bool {
        hasMagic && load32(base, 8) == SharedHeader.version && load32(base, 12) == UInt32(PageLayout.pageSize)
    }

    /// True when the header was written by version 1 of the lock scheme.
    var isVersion1: Bool {
        hasMagic && load32(base, 8) == 1
    }

    private var hasMagic: Bool {
        for (i, b) in SharedHeader.magic.enumerated() where base.load(fromByteOffset: i, as: UInt8.self) != b { return false }
        return true
    }

    /// Writes a fresh header: identity, `state`, no readers. Only with the writer lock held, and only when
    /// the existing contents are unusable (a foreign or older identity: its reader slots mean nothing here). Value
    /// boxes claim slots only in a header with a valid identity, so no live claim is lost.
    func initialize(_ state: Published) {
        base.initializeMemory(as: UInt8.self, repeating: 0, count: SharedHeader.size)
        store32(base, 8, SharedHeader.version)
        store32(base, 12, UInt32(PageLayout.pageSize))
        publish(state)
        word(72).store(0, ordering: .sequentiallyConsistent)
        // The magic goes last: a process that sees it sees the rest.
        var magic: UInt64 = 0
        for (i, b) in SharedHeader.magic.enumerated() { magic |= UInt64(b) << (8 * UInt64(i)) }
        word(0).store(magic, ordering: .sequentiallyConsistent)
    }

    // MARK: Published state

    /// The seqlock word: it changes whenever something is published.
    var sequence: UInt64 { word(16).load(ordering: .acquiring) }

    /// The published state and the seqlock value it was read at, read consistently; nil when it fails its
    /// checksum or stays locked by a writer (one that died in the middle of publishing).
    func read() -> (state: Published, sequence: UInt64)? {
        var spins = 0
        while true {
            let s1 = word(16).load(ordering: .acquiring)
            if s1 & 1 == 0 {
                let g = word(24).load(ordering: .relaxed)
                let salt = word(32).load(ordering: .relaxed)
                let v = word(40).load(ordering: .relaxed)
                let end = word(48).load(ordering: .relaxed)
                let master = word(56).load(ordering: .relaxed)
                let sum = word(64).load(ordering: .relaxed)
                atomicMemoryFence(ordering: .acquiring)
                if word(16).load(ordering: .relaxed) == s1 {
                    guard sum == SharedHeader.checksum(g, salt, v, end, master) else { return nil }
                    return (Published(generation: g, walSalt: salt, version: v, walEnd: end, masterClientId: Int64(bitPattern: master)), s1)
                }
            }
            spins += 1
            if spins > 100_000 { return nil }
            if spins > 100 { yieldProcessor() }
        }
    }

    /// Publishes `state` (writer lock held).
    func publish(_ state: Published) {
        let s = word(16).load(ordering: .relaxed)
        let odd = s | 1 == s ? s &+ 2 : s &+ 1
        word(16).store(odd, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        let master = UInt64(bitPattern: state.masterClientId)
        word(24).store(state.generation, ordering: .relaxed)
        word(32).store(state.walSalt, ordering: .relaxed)
        word(40).store(state.version, ordering: .relaxed)
        word(48).store(state.walEnd, ordering: .relaxed)
        word(56).store(master, ordering: .relaxed)
        word(64).store(SharedHeader.checksum(state.generation, state.walSalt, state.version, state.walEnd, master), ordering: .relaxed)
        word(16).store(odd &+ 1, ordering: .releasing)
        signalCommit()
    }

    static func checksum(_ g: UInt64, _ salt: UInt64, _ v: UInt64, _ end: UInt64, _ master: UInt64) -> UInt64 {
        var words = (g, salt, v, end, master)
        // The bytes of a variable always have an address.
        return withUnsafeBytes(of: &words) { XXH64.hash($0.baseAddress!, 40, seed: 0x4258_5744_4844_5231) }
    }

    /// The published TransactionStateVersion: one atomic load, no I/O.
    var transactionStateVersion: UInt64 { word(40).load(ordering: .acquiring) }

    /// The published MasterClientId.
    var masterClientId: Int64 { Int64(bitPattern: word(56).load(ordering: .acquiring)) }

    /// The digest of the boot (``BootDigest``) in which a writer last found the WAL intact — recovered it from the
    /// files with nothing cut that it did not cut itself, or reset it — or 0. Set only under the writer lock.
    /// Within that boot every record written since is visible to every process (whatever reached the disk), so
    /// recovery treats damage with an intact record after it as corruption, never as a torn tail. A header that
    /// survived a restart holds another boot's digest, and recovery falls back to what the records prove.
    var intactLogBoot: UInt64 {
        get { word(SharedHeader.intactLogBootOffset).load(ordering: .acquiring) }
        set { word(SharedHeader.intactLogBootOffset).store(newValue, ordering: .releasing) }
    }

    /// True while a writer is changing the files; left set by a writer that died doing so.
    var writerIsChangingFiles: Bool {
        get { word(72).load(ordering: .sequentiallyConsistent) != 0 }
        set { word(72).store(newValue ? 1 : 0, ordering: .sequentiallyConsistent) }
    }
}

