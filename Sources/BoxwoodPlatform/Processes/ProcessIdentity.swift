import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process, told apart from a later process that is given the same pid: its pid and a 32-bit digest of its start
/// time. Packed into one 64-bit word so that it can be claimed in shared memory with one compare-and-swap.
///
/// Liveness is decided without any lock held: the pid must exist (`kill(pid, 0)`; EPERM counts as existing — a
/// process of another sandbox) and must not be a zombie, and where the start time of another process can be read
/// (`/proc/<pid>/stat` on Linux, `sysctl(KERN_PROC_PID)` on Darwin) it must match. A start time that cannot be read
/// is recorded as 0 and matches anything: then a reused pid keeps a dead owner "alive", which only delays page
/// reuse — the safe direction.
///
/// `BOXWOOD_PORTABLE_LOCKS=1` (read once per process) leaves out everything but `kill(pid, 0)` — no start time, no
/// zombie check — so that Linux runs the check an iOS app may be left with when its sandbox hides other processes.
public struct ProcessIdentity: Hashable, Sendable {
    /// The process id.
    public let pid: pid_t
    /// A digest of the start time; 0 when unknown.
    public let startDigest: UInt32

    /// The identity packed into a non-zero word: pid in the high half, start digest in the low half.
    public var packed: UInt64 { UInt64(UInt32(bitPattern: pid)) << 32 | UInt64(startDigest) }

    public init(pid: pid_t, startDigest: UInt32) {
        self.pid = pid
        self.startDigest = startDigest
    }

    /// Unpacks a word made by ``packed``.
    public init(packed: UInt64) {
        pid = pid_t(bitPattern: UInt32(truncatingIfNeeded: packed >> 32))
        startDigest = UInt32(truncatingIfNeeded: packed)
    }

    /// This process.
    public static var current: ProcessIdentity { currentCache.identity() }

    /// This process's identity, read from the system once per pid (a forked child gets its own).
    private static let currentCache = CurrentIdentityCache()

    /// Whether start times are left out (`BOXWOOD_PORTABLE_LOCKS=1`).
    public static let portable: Bool = getenv("BOXWOOD_PORTABLE_LOCKS").map { String(cString: $0) == "1" } ?? false

    /// Whether this process is still running (see the type's description for how it is decided).
    public var isAlive: Bool {
        guard pid > 0 else { return false }
        if pid == getpid() { return startDigest == 0 || startDigest == ProcessIdentity.current.startDigest }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let state = ProcessIdentity.state(of: pid) else { return true }
        if state.zombie { return false }
        guard startDigest != 0, let digest = state.startDigest else { return true }
        return digest == startDigest
    }

    fileprivate static func startDigest(of pid: pid_t) -> UInt32? {
        state(of: pid)?.startDigest
    }

    /// Whether `pid` is a zombie, and its start digest, where the system tells (nil: it does not, or not here).
    private static func state(of pid: pid_t) -> (zombie: Bool, startDigest: UInt32?)? {
        if portable { return nil }
        #if os(Linux)
        // /proc/<pid>/stat: "pid (comm) S ... starttime(22) ..."; comm may hold spaces and parentheses, so the
        // fields are counted after the last ')'.
        guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        let zombie = fields[0] == "Z" || fields[0] == "X"
        guard let ticks = UInt64(fields[19]) else { return (zombie, nil) }
        return (zombie, digest(ticks))
        #elseif canImport(Darwin)
        var info = kinfo_proc()
        var size = MemoryLayout<kinfo_proc>.stride
        var name: [CInt] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, pid]
        guard sysctl(&name, 4, &info, &size, nil, 0) == 0, size > 0 else { return nil }
        let zombie = info.kp_proc.p_stat == SZOMB
        let start = info.kp_proc.p_un.__p_starttime
        return (zombie, digest(UInt64(start.tv_sec) &* 1_000_000 &+ UInt64(start.tv_usec)))
        #else
        return nil
        #endif
    }

    /// A non-zero 32-bit digest of a start time.
    private static func digest(_ value: UInt64) -> UInt32 {
        var x = value &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        let folded = UInt32(truncatingIfNeeded: x ^ (x >> 32))
        return folded == 0 ? 1 : folded
    }
}

/// The identity of the running process, kept after the first look.
private final class CurrentIdentityCache: @unchecked Sendable {
    private let lock = PlatformLock()
    private var cached: ProcessIdentity?

    func identity() -> ProcessIdentity {
        let pid = getpid()
        return lock.withLock {
            if let cached, cached.pid == pid { return cached }
            let identity = ProcessIdentity(pid: pid, startDigest: ProcessIdentity.startDigest(of: pid) ?? 0)
            cached = identity
            return identity
        }
    }
}

#if os(Linux)
/// The contents of a small file (a /proc entry), or nil.
func readSmallFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    let owner = OwnedDescriptor(takingRaw: descriptor)
    var buffer = [UInt8](repeating: 0, count: 4096)
    guard let count = try? buffer.withUnsafeMutableBytes({ try owner.descriptor.read(into: $0, retryOnInterrupt: true) }), count > 0 else {
        return nil
    }
    return String(decoding: buffer[..<count], as: UTF8.self)
}
#endif
