import BoxwoodStore
import BoxwoodPlatform
import SystemPackage

/// One file's bytes on a ``SimulatedDisk``: what the page cache shows (`cache`, which `map` exposes
/// directly, like a `MAP_SHARED` mapping) and what is on the platter (`durable`), plus the writes and
/// truncations issued since the last sync that a power cut may keep, drop, tear or reorder.
final class SimulatedNode {
    enum PendingChange {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)
        /// The file's size reached `size` on disk although some of the bytes before it did not (a torn
        /// write's metadata): it grows, with zeros, and never shrinks.
        case grow(size: Int)
    }

    /// Page-cache contents; bytes at and past `size` are always zero.
    let cache: UnsafeMutableRawPointer
    let capacity: Int
    var size = 0
    var durable: [UInt8] = []
    var pending: [PendingChange] = []

    /// Throws `.io(mmap, ENOMEM)` when the address space for the file's cache cannot be reserved.
    init(capacity: Int, contents: [UInt8] = []) throws(BoxwoodError) {
        self.capacity = capacity
        guard let address = reserveAddressSpace(capacity) else {
            throw .io(operation: "mmap", path: "(simulated file of \(capacity) bytes)", errno: Errno.noMemory.rawValue)
        }
        cache = address
        durable = contents
        size = contents.count
        contents.withUnsafeBytes { if $0.count > 0 { cache.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
    }

    deinit { releaseAddressSpace(cache, length: capacity) }

    /// Applies a change to the page-cache view.
    func applyToCache(_ change: PendingChange) {
        switch change {
        case let .write(offset, bytes):
            bytes.withUnsafeBytes { (cache + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            size = max(size, offset + bytes.count)
        case let .truncate(newSize):
            if newSize < size { (cache + newSize).initializeMemory(as: UInt8.self, repeating: 0, count: size - newSize) }
            size = newSize
        case let .grow(newSize):
            size = max(size, newSize)
        }
    }

    /// Makes every pending change durable, in order (a successful fsync).
    func syncAll() {
        for change in pending { SimulatedNode.apply(change, to: &durable) }
        pending = []
    }

    static func apply(_ change: PendingChange, to bytes: inout [UInt8]) {
        switch change {
        case let .write(offset, data):
            if bytes.count < offset + data.count { bytes.append(contentsOf: repeatElement(0, count: offset + data.count - bytes.count)) }
            bytes.replaceSubrange(offset..<(offset + data.count), with: data)
        case let .truncate(newSize):
            if newSize < bytes.count { bytes.removeLast(bytes.count - newSize) } else {
                bytes.append(contentsOf: repeatElement(0, count: newSize - bytes.count))
            }
        case let .grow(newSize):
            if newSize > bytes.count { bytes.append(contentsOf: repeatElement(0, count: newSize - bytes.count)) }
        }
    }
}

/// An open handle on a ``SimulatedDisk`` file.
final class SimulatedFile: StorageFile {
    let path: String
    /// Recorded only: the simulated disk has no drive cache; a sync makes pending writes durable either way.
    var flushesDriveCache = false
    let node: SimulatedNode
    unowned let disk: SimulatedDisk
    let readOnly: Bool
    private var isOpen = true

    init(path: String, node: SimulatedNode, disk: SimulatedDisk, readOnly: Bool) {
        self.path = path
        self.node = node
        self.disk = disk
        self.readOnly = readOnly
    }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) -> Int {
        let start = Int(clamping: offset)
        guard start < node.size else { return 0 }
        let n = min(count, node.size - start)
        buffer.copyMemory(from: node.cache + start, byteCount: n)
        return n
    }

    func write(_ buffer: UnsafeRawPointer, count: Int, offset: UInt64) throws(BoxwoodError) {
        if readOnly { throw .io(operation: "pwrite", path: path, errno: Errno.badFileDescriptor.rawValue) }
        let start = Int(clamping: offset)
        guard start + count <= node.capacity else { throw .io(operation: "pwrite", path: path, errno: Errno.fileTooLarge.rawValue) }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer, count: count))
        try disk.perform(.write, path: path) { (failure: SimulatedDisk.InjectedFailure?) in
            if failure != nil {
                // A failed write may still have put a sector-aligned prefix into the page cache.
                let kept = self.disk.failedWritePrefix(offset: start, count: count)
                if kept > 0 { self.record(.write(offset: start, bytes: Array(bytes[0..<kept]))) }
                return
            }
            self.record(.write(offset: start, bytes: bytes))
        }
    }

    func sync() throws(BoxwoodError) { try syncNode("fsync") }

    func dataSync() throws(BoxwoodError) { try syncNode("fdatasync") }

    private func syncNode(_ operation: String) throws(BoxwoodError) {
        if readOnly { return }
        try disk.perform(.sync, path: path) { (failure: SimulatedDisk.InjectedFailure?) in
            if failure != nil {
                // Linux: the pages are marked clean whatever reached the disk; the cache keeps showing them.
                self.disk.applyPowerCutFate(to: self.node)
            } else {
                self.node.syncAll()
            }
        }
    }

    func size() throws(BoxwoodError) -> UInt64 { UInt64(node.size) }

    func truncate(to size: UInt64) throws(BoxwoodError) {
        if readOnly { throw .io(operation: "ftruncate", path: path, errno: Errno.badFileDescriptor.rawValue) }
        let newSize = Int(clamping: size)
        guard newSize <= node.capacity else { throw .io(operation: "ftruncate", path: path, errno: Errno.fileTooLarge.rawValue) }
        try disk.perform(.truncate, path: path) { (failure: SimulatedDisk.InjectedFailure?) in
            if failure == nil { self.record(.truncate(size: newSize)) }
        }
    }

    private func record(_ change: SimulatedNode.PendingChange) {
        node.applyToCache(change)
        node.pending.append(change)
    }

    func map(length: Int) throws(BoxwoodError) -> UnsafeRawPointer {
        guard length <= node.capacity else { throw .io(operation: "mmap", path: path, errno: Errno.noMemory.rawValue) }
        return UnsafeRawPointer(node.cache)
    }

    func unmap(_ address: UnsafeRawPointer, length: Int) {}

    func close() {
        guard isOpen else { return }
        isOpen = false
    }
}
