import BoxwoodStore
/// The coordination region of one database on a ``SimulatedDisk``: shared memory, the writer lock and the set of
/// live holders that every value box opened on that disk (each one playing a process) sees. It is not part of the
/// simulated platter: like a real shared header it is volatile, and it starts empty after `reboot()` or
/// `afterProcessKill()`, when every process that held it is gone.
final class SimulatedCoordinationRegion {
    let memory: UnsafeMutableRawPointer
    /// The holder with the writer lock.
    var writer: ObjectIdentifier?
    /// Identities of the opens not yet closed.
    var liveHolders: Set<UInt64> = []
    var nextIdentity: UInt64 = 1

    init() {
        memory = UnsafeMutableRawPointer.allocate(byteCount: SimulatedCoordinationFile.mappingSize, alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: SimulatedCoordinationFile.mappingSize)
    }

    deinit { memory.deallocate() }
}

/// One open of a simulated coordination file (one "process": its lock and its identity are its own).
final class SimulatedCoordinationFile: CoordinationFile {
    let path: String
    let region: SimulatedCoordinationRegion
    let holderIdentity: UInt64
    var memory: UnsafeMutableRawPointer { region.memory }
    private var isOpen = true

    init(path: String, region: SimulatedCoordinationRegion) {
        self.path = path
        self.region = region
        holderIdentity = region.nextIdentity
        region.nextIdentity += 1
        region.liveHolders.insert(holderIdentity)
    }

    deinit { close() }

    func tryLockWriter() throws(BoxwoodError) -> Bool {
        let me = ObjectIdentifier(self)
        if let writer = region.writer, writer != me { return false }
        region.writer = me
        return true
    }

    func unlockWriter() {
        if region.writer == ObjectIdentifier(self) { region.writer = nil }
    }

    func isHolderAlive(_ identity: UInt64) -> Bool {
        region.liveHolders.contains(identity)
    }

    func hasVersion1Holders() throws(BoxwoodError) -> Bool { false }

    func close() {
        guard isOpen else { return }
        isOpen = false
        unlockWriter()
        region.liveHolders.remove(holderIdentity)
    }
}
