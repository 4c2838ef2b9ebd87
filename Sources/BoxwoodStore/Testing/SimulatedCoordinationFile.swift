/// The coordination region of one database on a ``SimulatedDisk``: shared memory and byte locks that every
/// value box opened on that disk (each one playing a process) sees. It is not part of the simulated
/// platter: like a real shared header it is volatile, and it starts empty after `reboot()` or
/// `afterProcessKill()`, when every process that held its locks is gone.
final class SimulatedCoordinationRegion {
    let memory: UnsafeMutableRawPointer
    /// Lock byte → holders (one exclusive holder, or any number of shared ones).
    var locks: [UInt64: (exclusive: Bool, holders: Set<ObjectIdentifier>)] = [:]

    init() {
        memory = UnsafeMutableRawPointer.allocate(byteCount: SharedHeader.size, alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: SharedHeader.size)
    }

    deinit { memory.deallocate() }
}

/// One open of a simulated coordination file (one "open file description": its locks are its own).
final class SimulatedCoordinationFile: CoordinationFile {
    let path: String
    let region: SimulatedCoordinationRegion
    var memory: UnsafeMutableRawPointer { region.memory }
    private var isOpen = true

    init(path: String, region: SimulatedCoordinationRegion) {
        self.path = path
        self.region = region
    }

    deinit { close() }

    func tryLock(offset: UInt64, exclusive: Bool) throws(BoxwoodError) -> Bool {
        let me = ObjectIdentifier(self)
        guard let current = region.locks[offset] else {
            region.locks[offset] = (exclusive, [me])
            return true
        }
        let others = current.holders.subtracting([me])
        if others.isEmpty {
            region.locks[offset] = (exclusive, [me])
            return true
        }
        if exclusive || current.exclusive { return false }
        region.locks[offset] = (false, current.holders.union([me]))
        return true
    }

    func unlock(offset: UInt64) {
        guard var current = region.locks[offset] else { return }
        current.holders.remove(ObjectIdentifier(self))
        region.locks[offset] = current.holders.isEmpty ? nil : current
    }

    func isLockedByOthers(offset: UInt64) throws(BoxwoodError) -> Bool {
        guard let current = region.locks[offset] else { return false }
        return !current.holders.subtracting([ObjectIdentifier(self)]).isEmpty
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        for offset in Array(region.locks.keys) { unlock(offset: offset) }
    }
}
