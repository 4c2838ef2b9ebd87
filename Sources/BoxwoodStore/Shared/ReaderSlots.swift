import Atomics

/// Reader slots in the shared header: how a checkpoint in one process learns which checkpoint generations
/// readers in other processes may still be reading.
///
/// Slot i (64 bytes at `SharedHeader.slotsOffset + 64 i`):
///
///     0  8  pin    1 + the generation the owner's snapshot reads from; 0 while it reads nothing
///     8  8  pid    the owner's process id (diagnostics only)
///
/// An open value box owns one slot, proven by an exclusive lock on the slot's lock byte (taken with a
/// non-blocking lock, so two claimers never share a slot). The kernel drops that lock when the owner dies;
/// a checkpoint that finds a pin below its base generation checks the lock, and clears the pin of a dead
/// owner instead of waiting for it forever.
extension SharedHeader {
    @inline(__always)
    func pinWord(_ slot: Int) -> UnsafeAtomic<UInt64> { word(SharedHeader.slotsOffset + SharedHeader.slotSize * slot) }

    /// Claims a free slot for this holder. Throws `.readerSlotsFull` when every slot is owned by a live holder.
    func claimSlot() throws(BoxwoodError) -> Int {
        let start = Int.random(in: 0..<SharedHeader.slotCount)
        for k in 0..<SharedHeader.slotCount {
            let slot = (start + k) % SharedHeader.slotCount
            guard try file.tryLock(offset: SharedHeader.slotLockBase + UInt64(slot), exclusive: true) else { continue }
            // Whatever the slot holds was left by a dead owner.
            pinWord(slot).store(0, ordering: .sequentiallyConsistent)
            word(SharedHeader.slotsOffset + SharedHeader.slotSize * slot + 8).store(UInt64(getpid()), ordering: .relaxed)
            return slot
        }
        throw .readerSlotsFull(path: file.path, slots: SharedHeader.slotCount)
    }

    /// Gives a slot back.
    func releaseSlot(_ slot: Int) {
        pinWord(slot).store(0, ordering: .sequentiallyConsistent)
        word(SharedHeader.slotsOffset + SharedHeader.slotSize * slot + 8).store(0, ordering: .relaxed)
        file.unlock(offset: SharedHeader.slotLockBase + UInt64(slot))
    }

    /// Pins the current checkpoint generation in `slot` and returns it. A checkpoint that starts after this
    /// returns sees the pin; one that already runs has published a generation at least as new, which the
    /// re-check catches (LMDB's reader-table protocol).
    func pin(_ slot: Int) -> UInt64 {
        while true {
            let generation = word(24).load(ordering: .sequentiallyConsistent)
            pinWord(slot).store(generation &+ 1, ordering: .sequentiallyConsistent)
            if word(24).load(ordering: .sequentiallyConsistent) == generation { return generation }
        }
    }

    func unpin(_ slot: Int) {
        pinWord(slot).store(0, ordering: .releasing)
    }

    /// True when a live reader (in any process, `ownSlot` excepted) pins a generation older than
    /// `generation`. Pins of dead owners are cleared on the way.
    func hasLiveReader(olderThan generation: UInt64, ownSlot: Int?) throws(BoxwoodError) -> Bool {
        for slot in 0..<SharedHeader.slotCount where slot != ownSlot {
            let pin = pinWord(slot).load(ordering: .sequentiallyConsistent)
            if pin == 0 || pin - 1 >= generation { continue }
            if try file.isLockedByOthers(offset: SharedHeader.slotLockBase + UInt64(slot)) { return true }
            // The owner died while reading: its lock is gone. A new owner would have reset the pin first.
            _ = pinWord(slot).compareExchange(expected: pin, desired: 0, ordering: .sequentiallyConsistent)
        }
        return false
    }

    /// Pins in use right now (diagnostics and tests).
    func pinnedGenerations() -> [UInt64] {
        (0..<SharedHeader.slotCount).compactMap { slot in
            let pin = pinWord(slot).load(ordering: .sequentiallyConsistent)
            return pin == 0 ? nil : pin - 1
        }
    }

    // MARK: Writer lock

    /// Takes the writer lock, waiting up to `timeout` seconds. Throws `.lockTimeout` when another holder
    /// keeps it longer.
    func lockWriter(timeout: Double) throws(BoxwoodError) {
        if try file.tryLock(offset: SharedHeader.writerLockOffset, exclusive: true) { return }
        let deadline = ContinuousClock.now + .seconds(timeout)
        var pause: UInt32 = 20
        while true {
            usleep(pause)
            if try file.tryLock(offset: SharedHeader.writerLockOffset, exclusive: true) { return }
            if ContinuousClock.now >= deadline { throw .lockTimeout(path: file.path, seconds: timeout) }
            pause = min(pause * 2, 2000)
        }
    }

    /// Takes the writer lock if it is free right now.
    func tryLockWriter() throws(BoxwoodError) -> Bool {
        try file.tryLock(offset: SharedHeader.writerLockOffset, exclusive: true)
    }

    func unlockWriter() {
        file.unlock(offset: SharedHeader.writerLockOffset)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
