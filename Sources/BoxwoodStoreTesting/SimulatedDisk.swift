import BoxwoodStore
import SystemPackage

/// An in-memory disk with a page cache, for proving crash safety: plug it into ``ValueBox`` as its
/// `fileSystem`, schedule a power cut or an I/O error, then ``reboot()`` and look at what survived.
///
/// The model (see `docs/crash-safety.md`):
/// - Writes and truncations land in the page cache at once (reads and `map` see them) and become durable
///   only when the file is synced. Creating, removing and renaming files and directories becomes durable
///   only when the parent directory is synced (`fsync` of a file does not make its name durable).
/// - At a power cut, each file's unsynced changes meet a random fate: all kept, none kept, or an arbitrary
///   subset, each kept write possibly torn at 512-byte sectors (its other sectors keep their old bytes, or
///   zeros past the old end), applied in a shuffled order. Unsynced directory changes survive as a prefix
///   (file systems journal metadata in order).
/// - A failed `fsync` (injected `EIO`) gives the file's unsynced changes the same random fate and marks
///   them clean, while the cache keeps showing them — the page-cache lie that makes retrying an fsync
///   unsafe. A failed write may leave a sector-aligned prefix in the cache.
/// - Every mutating operation (write, truncate, sync, directory change) is counted; a scheduled power cut
///   or failure happens at a chosen count, so tests can hit any point of a commit or checkpoint.
///
/// Deterministic for a given seed and sequence of calls. Not thread-safe.
public final class SimulatedDisk: StorageFileSystem {
    enum Entry {
        case file(SimulatedNode)
        case directory
    }

    enum OperationKind {
        case write, sync, truncate, directory
    }

    struct InjectedFailure {
        let errno: Int32
    }

    /// Counts of what power cuts and failures did, for test summaries.
    public struct Statistics: Sendable {
        public var writesKept = 0
        public var writesTorn = 0
        public var writesDropped = 0
        public var truncationsDropped = 0
        public var directoryChangesDropped = 0
        public var failuresInjected = 0

        public init() {}

        /// Adds another disk's counts (to total several simulated devices).
        public mutating func add(_ other: Statistics) {
            writesKept += other.writesKept
            writesTorn += other.writesTorn
            writesDropped += other.writesDropped
            truncationsDropped += other.truncationsDropped
            directoryChangesDropped += other.directoryChangesDropped
            failuresInjected += other.failuresInjected
        }
    }

    private var rng: SplitMix64
    private var entries: [String: Entry] = ["/": .directory]
    /// Shared headers of the databases on this disk, by path (volatile: a new disk starts without them).
    private var coordination: [String: SimulatedCoordinationRegion] = [:]
    private var durableEntries: [String: Entry] = ["/": .directory]
    private var pendingDirectoryChanges: [(directory: String, apply: (inout [String: Entry]) -> Void)] = []
    private let fileCapacity: Int

    /// Mutating operations performed so far.
    public private(set) var operationCount = 0
    /// True once a scheduled power cut has happened: every later mutating operation fails with `EIO`.
    public private(set) var isPoweredOff = false
    /// What power cuts and failures did on this disk (carried over by ``reboot()``).
    public private(set) var statistics = Statistics()
    private var powerCutAt: Int?
    private var failures: [Int: Int32] = [:]

    /// A disk holding only the root directory. `fileCapacity` bounds each file (address space is reserved,
    /// not memory).
    public init(seed: UInt64, fileCapacity: Int = 1 << 30) {
        rng = SplitMix64(seed: seed)
        self.fileCapacity = fileCapacity
    }

    /// The power goes off just before the `n`-th mutating operation from now (`n` ≥ 1): that operation and
    /// every later one fail with `EIO`.
    public func schedulePowerCut(afterOperations n: Int) {
        powerCutAt = operationCount + max(1, n)
    }

    /// Forgets failures scheduled with ``scheduleFailure(afterOperations:errno:)`` that have not happened yet.
    public func cancelScheduledFailures() {
        failures = [:]
    }

    /// The `n`-th mutating operation from now (`n` ≥ 1) fails with `errno` (`ENOSPC`, `EIO`, ...).
    public func scheduleFailure(afterOperations n: Int, errno: Int32) {
        failures[operationCount + max(1, n)] = errno
    }

    /// The disk as the machine finds it after the power comes back: durable bytes and names only, each
    /// unsynced change having met its random fate. This disk is powered off for good (handles still open on
    /// it fail), so an abandoned ``ValueBox`` cannot touch the rebooted one.
    public func reboot() throws(BoxwoodError) -> SimulatedDisk {
        isPoweredOff = true
        let next = SimulatedDisk(seed: rng.next(), fileCapacity: fileCapacity)
        // Directory changes are journaled in order: a prefix survives.
        let kept = pendingDirectoryChanges.isEmpty ? 0 : rng.below(pendingDirectoryChanges.count + 1)
        for change in pendingDirectoryChanges.prefix(kept) { change.apply(&durableEntries) }
        statistics.directoryChangesDropped += pendingDirectoryChanges.count - kept
        pendingDirectoryChanges = []
        var rebuilt: [ObjectIdentifier: SimulatedNode] = [:]
        var newEntries: [String: Entry] = [:]
        for (path, entry) in durableEntries {
            switch entry {
            case .directory:
                newEntries[path] = .directory
            case let .file(node):
                let id = ObjectIdentifier(node)
                if rebuilt[id] == nil {
                    applyPowerCutFate(to: node)
                    rebuilt[id] = try SimulatedNode(capacity: fileCapacity, contents: node.durable)
                }
                newEntries[path] = .file(rebuilt[id]!)
            }
        }
        next.entries = newEntries
        next.durableEntries = newEntries
        next.statistics = statistics
        return next
    }

    /// The disk as a killed process leaves it (the kernel survives, so the page cache does): a copy in which
    /// everything written so far is durable. This disk is unaffected.
    public func afterProcessKill() throws(BoxwoodError) -> SimulatedDisk {
        let next = SimulatedDisk(seed: rng.next(), fileCapacity: fileCapacity)
        var copies: [ObjectIdentifier: SimulatedNode] = [:]
        for (path, entry) in entries {
            switch entry {
            case .directory:
                next.entries[path] = .directory
            case let .file(node):
                let id = ObjectIdentifier(node)
                if copies[id] == nil {
                    copies[id] = try SimulatedNode(capacity: fileCapacity,
                                               contents: [UInt8](UnsafeRawBufferPointer(start: node.cache, count: node.size)))
                }
                next.entries[path] = .file(copies[id]!)
            }
        }
        next.durableEntries = next.entries
        next.statistics = statistics
        return next
    }

    /// The bytes of the file at `path` as the page cache shows them, or nil when there is no such file.
    public func contents(of path: String) -> [UInt8]? {
        guard case let .file(node)? = entries[path] else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: node.cache, count: node.size))
    }

    /// Overwrites bytes of the file at `path` in the cache and on the platter at once (bit rot, a stray
    /// write): not an operation of the program, so it is not counted and cannot fail.
    public func damage(_ path: String, offset: Int, bytes: [UInt8]) {
        guard case let .file(node)? = entries[path], !bytes.isEmpty else { return }
        let change = SimulatedNode.PendingChange.write(offset: offset, bytes: bytes)
        node.applyToCache(change)
        SimulatedNode.apply(change, to: &node.durable)
    }

    // MARK: StorageFileSystem

    public func open(_ path: String, create: Bool, readOnly: Bool) throws(BoxwoodError) -> StorageFile {
        switch entries[path] {
        case let .file(node)?:
            return SimulatedFile(path: path, node: node, disk: self, readOnly: readOnly)
        case .directory?:
            throw .io(operation: "open", path: path, errno: Errno.isDirectory.rawValue)
        case nil:
            guard create, !readOnly else { throw .io(operation: "open", path: path, errno: Errno.noSuchFileOrDirectory.rawValue) }
            let parent = SimulatedDisk.parent(of: path)
            guard case .directory? = entries[parent] else { throw .io(operation: "open", path: path, errno: Errno.noSuchFileOrDirectory.rawValue) }
            let node = try SimulatedNode(capacity: fileCapacity)
            try perform(.directory, path: path) { (failure: InjectedFailure?) in
                guard failure == nil else { return }
                self.entries[path] = .file(node)
                self.pendingDirectoryChanges.append((parent, { $0[path] = .file(node) }))
            }
            return SimulatedFile(path: path, node: node, disk: self, readOnly: false)
        }
    }

    public func openCoordinationFile(_ path: String) throws(BoxwoodError) -> CoordinationFile {
        let path = SimulatedDisk.normalized(path)
        guard case .directory? = entries[SimulatedDisk.parent(of: path)] else { throw .io(operation: "open", path: path, errno: Errno.noSuchFileOrDirectory.rawValue) }
        let region = coordination[path] ?? SimulatedCoordinationRegion()
        coordination[path] = region
        return SimulatedCoordinationFile(path: path, region: region)
    }

    /// The names directly inside `directory` (files and directories), sorted: what a test expects a directory to
    /// hold after an operation that must leave nothing behind.
    public func names(in directory: String) -> [String] {
        let directory = SimulatedDisk.normalized(directory)
        return entries.keys.filter { $0 != directory && SimulatedDisk.parent(of: $0) == directory }
            .map { String($0.dropFirst(directory == "/" ? 1 : directory.count + 1)) }
            .sorted()
    }

    public func kind(of path: String) -> FileKind? {
        switch entries[SimulatedDisk.normalized(path)] {
        case .file?: return .regular
        case .directory?: return .directory
        case nil: return nil
        }
    }

    public func createDirectory(_ path: String) throws(BoxwoodError) {
        let path = SimulatedDisk.normalized(path)
        if case .directory? = entries[path] { return }
        if entries[path] != nil { throw .io(operation: "mkdir", path: path, errno: Errno.fileExists.rawValue) }
        let parent = SimulatedDisk.parent(of: path)
        guard case .directory? = entries[parent] else { throw .io(operation: "mkdir", path: path, errno: Errno.noSuchFileOrDirectory.rawValue) }
        try perform(.directory, path: path) { (failure: InjectedFailure?) in
            guard failure == nil else { return }
            self.entries[path] = .directory
            self.pendingDirectoryChanges.append((parent, { $0[path] = .directory }))
        }
    }

    public func syncDirectory(_ path: String) throws(BoxwoodError) {
        let path = SimulatedDisk.normalized(path)
        guard case .directory? = entries[path] else { throw .io(operation: "open(dir)", path: path, errno: Errno.noSuchFileOrDirectory.rawValue) }
        try perform(.sync, path: path) { (failure: InjectedFailure?) in
            guard failure == nil else { return }
            var remaining: [(directory: String, apply: (inout [String: Entry]) -> Void)] = []
            for change in self.pendingDirectoryChanges {
                if change.directory == path { change.apply(&self.durableEntries) } else { remaining.append(change) }
            }
            self.pendingDirectoryChanges = remaining
        }
    }

    public func removeFile(_ path: String) throws(BoxwoodError) {
        guard case .file? = entries[path] else { return }
        try perform(.directory, path: path) { (failure: InjectedFailure?) in
            guard failure == nil else { return }
            self.entries[path] = nil
            self.pendingDirectoryChanges.append((SimulatedDisk.parent(of: path), { $0[path] = nil }))
        }
    }

    public func removeDirectory(_ path: String) throws(BoxwoodError) {
        let path = SimulatedDisk.normalized(path)
        guard case .directory? = entries[path] else {
            if entries[path] != nil { throw .io(operation: "rmdir", path: path, errno: Errno.notDirectory.rawValue) }
            return
        }
        if entries.keys.contains(where: { $0 != path && SimulatedDisk.parent(of: $0) == path }) {
            throw .io(operation: "rmdir", path: path, errno: Errno.directoryNotEmpty.rawValue)
        }
        try perform(.directory, path: path) { (failure: InjectedFailure?) in
            guard failure == nil else { return }
            self.entries[path] = nil
            self.pendingDirectoryChanges.append((SimulatedDisk.parent(of: path), { $0[path] = nil }))
        }
    }

    public func rename(_ from: String, to: String) throws(BoxwoodError) {
        guard entries[from] != nil else { throw .io(operation: "rename", path: from, errno: Errno.noSuchFileOrDirectory.rawValue) }
        // A directory moves with everything under it (a backup renames its finished directory into place).
        func move(_ table: inout [String: Entry]) {
            for path in Array(table.keys) where path == from || path.hasPrefix(from + "/") {
                let moved = table.removeValue(forKey: path)
                table[to + path.dropFirst(from.count)] = moved
            }
        }
        try perform(.directory, path: from) { (failure: InjectedFailure?) in
            guard failure == nil else { return }
            move(&self.entries)
            // Both names live in one directory in Boxwood's use; the change is journaled as one.
            self.pendingDirectoryChanges.append((SimulatedDisk.parent(of: to), { durable in move(&durable) }))
        }
    }

    // MARK: Faults

    /// Counts a mutating operation and runs `body`, telling it whether this operation is the one chosen to
    /// fail; throws the failure (or `EIO` once the power is off).
    func perform(_ kind: OperationKind, path: String, _ body: (InjectedFailure?) -> Void) throws(BoxwoodError) {
        let name = SimulatedDisk.operationName(kind)
        if isPoweredOff { throw .io(operation: name, path: path, errno: Errno.ioError.rawValue) }
        operationCount += 1
        if let cut = powerCutAt, operationCount >= cut {
            isPoweredOff = true
            throw .io(operation: name, path: path, errno: Errno.ioError.rawValue)
        }
        if let code = failures.removeValue(forKey: operationCount) {
            statistics.failuresInjected += 1
            body(InjectedFailure(errno: code))
            throw .io(operation: name, path: path, errno: code)
        }
        body(nil)
    }

    /// How many bytes of a failed write reach the cache: none, or a sector-aligned prefix.
    func failedWritePrefix(offset: Int, count: Int) -> Int {
        guard rng.chance(0.5) else { return 0 }
        let sectorEnd = (offset / 512 + 1 + rng.below(max(1, count / 512 + 1))) * 512
        return max(0, min(count, sectorEnd - offset))
    }

    /// Gives the node's unsynced changes a random fate on the platter and forgets them.
    func applyPowerCutFate(to node: SimulatedNode) {
        let changes = node.pending
        node.pending = []
        if changes.isEmpty { return }
        let mode = rng.below(10)
        let writes = changes.reduce(0) { if case .write = $1 { return $0 + 1 } else { return $0 } }
        if mode < 2 { // nothing reached the disk
            statistics.writesDropped += writes
            return
        }
        if mode < 4 { // everything did
            for change in changes { SimulatedNode.apply(change, to: &node.durable) }
            statistics.writesKept += writes
            return
        }
        // An arbitrary subset, torn at sectors, reordered between truncations.
        var segment: [SimulatedNode.PendingChange] = []
        func flushSegment() {
            segment.shuffle(using: &rng)
            for change in segment { SimulatedNode.apply(change, to: &node.durable) }
            segment = []
        }
        for change in changes {
            switch change {
            case let .write(offset, bytes):
                if !rng.chance(0.6) { statistics.writesDropped += 1; continue }
                if bytes.count > 512 || offset % 512 + bytes.count > 512, rng.chance(0.35) {
                    statistics.writesTorn += 1
                    segment.append(contentsOf: tear(offset: offset, bytes: bytes, into: node))
                } else {
                    statistics.writesKept += 1
                    segment.append(change)
                }
            case .grow:
                segment.append(change)
            case .truncate:
                flushSegment()
                if rng.chance(0.5) { SimulatedNode.apply(change, to: &node.durable) } else { statistics.truncationsDropped += 1 }
            }
        }
        flushSegment()
    }

    /// The sectors of a torn write that reached the disk, as separate writes; the file may or may not have
    /// grown to the write's end (the unwritten sectors then read as zeros).
    private func tear(offset: Int, bytes: [UInt8], into node: SimulatedNode) -> [SimulatedNode.PendingChange] {
        var pieces: [SimulatedNode.PendingChange] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, (offset + start) / 512 * 512 + 512 - offset)
            if rng.chance(0.5) { pieces.append(.write(offset: offset + start, bytes: Array(bytes[start..<end]))) }
            start = end
        }
        if rng.chance(0.5) { pieces.append(.grow(size: offset + bytes.count)) }
        return pieces
    }

    // MARK: Paths

    static func normalized(_ path: String) -> String {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return p
    }

    static func parent(of path: String) -> String {
        let p = normalized(path)
        guard let slash = p.lastIndex(of: "/") else { return "." }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }

    private static func operationName(_ kind: OperationKind) -> String {
        switch kind {
        case .write: return "pwrite"
        case .sync: return "fsync"
        case .truncate: return "ftruncate"
        case .directory: return "directory change"
        }
    }
}
