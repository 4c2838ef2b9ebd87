import Atomics
import BoxwoodPlatform

/// Reader slots in the shared header: how a checkpoint in one process learns which checkpoint generations
/// readers in other processes may still be reading.
///
/// Slot i (64 bytes at `SharedHeader.slotsOffset + 64 i`):
///
///     0  8  pin     1 + the generation the holder's snapshot reads from; 0 while it reads nothing
///     8  8  holder  the holder's identity (``CoordinationFile/holderIdentity``: pid and start time), 0 when free
///    16  8  since   when the holder claimed the slot (wall-clock seconds since 1970; 0 unknown): for diagnostics only
///
/// Invariant kept here: **a slot has at most one holder, and no lock is held for it.** An open value box claims a
/// slot by a compare-and-swap of its identity into `holder` — from 0, or from the identity of a holder that is no
/// longer alive — and gives it back by storing 0. A checkpoint that finds a pin below its base generation asks
/// whether that holder is alive (``CoordinationFile/isHolderAlive(_:)``), and clears the pin of a dead one instead
/// of waiting for it forever. Liveness is judged conservatively: a holder that cannot be proven dead counts as
/// alive, which can only delay page reuse, never allow reuse of a page a live reader reads.
extension SharedHeader {
    @inline(__always)
    func pinWord(_ slot: Int) -> UnsafeAtomic<UInt64> { word(SharedHeader.slotsOffset + SharedHeader.slotSize * slot) }

    @inline(__always)
    func holderWord(_ slot: Int) -> UnsafeAtomic<UInt64> { word(SharedHeader.slotsOffset + SharedHeader.slotSize * slot + 8) }

    @inline(__always)
    func claimedAtWord(_ slot: Int) -> UnsafeAtomic<UInt64> { word(SharedHeader.slotsOffset + SharedHeader.slotSize * slot + 16) }

    /// Claims a slot for this holder: a free one if there is any, else one whose holder died. Throws
    /// `.readerSlotsFull` when every slot has a live holder.
    func claimSlot() throws(BoxwoodError) -> Int {
        let me = file.holderIdentity
        let start = Int.random(in: 0..<SharedHeader.slotCount)
        for reclaiming in [false, true] {
            for k in 0..<SharedHeader.slotCount {
                let slot = (start + k) % SharedHeader.slotCount
                let holder = holderWord(slot).load(ordering: .sequentiallyConsistent)
                if reclaiming {
                    guard holder != 0, !file.isHolderAlive(holder) else { continue }
                } else {
                    guard holder == 0 else { continue }
                }
                guard holderWord(slot).compareExchange(expected: holder, desired: me, ordering: .sequentiallyConsistent).exchanged else { continue }
                // Whatever pin the slot holds was left by a dead holder.
                pinWord(slot).store(0, ordering: .sequentiallyConsistent)
                claimedAtWord(slot).store(WallClock.secondsSinceEpoch(), ordering: .relaxed)
                return slot
            }
        }
        throw .readerSlotsFull(path: file.path, slots: SharedHeader.slotCount)
    }

    /// Gives a slot back.
    func releaseSlot(_ slot: Int) {
        pinWord(slot).store(0, ordering: .sequentiallyConsistent)
        claimedAtWord(slot).store(0, ordering: .relaxed)
        holderWord(slot).store(0, ordering: .sequentiallyConsistent)
    }

    /// Whether this holder still holds `slot` (false after the header was rebuilt under it).
    func holdsSlot(_ slot: Int) -> Bool {
        holderWord(slot).load(ordering: .sequentiallyConsistent) == file.holderIdentity
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
    /// `generation`. Pins of dead holders are cleared on the way.
    func hasLiveReader(olderThan generation: UInt64, ownSlot: Int?) throws(BoxwoodError) -> Bool {
        for slot in 0..<SharedHeader.slotCount where slot != ownSlot {
            let pin = pinWord(slot).load(ordering: .sequentiallyConsistent)
            if pin == 0 || pin - 1 >= generation { continue }
            let holder = holderWord(slot).load(ordering: .sequentiallyConsistent)
            if holder != 0 && file.isHolderAlive(holder) { return true }
            // The holder died while reading (or gave the slot back between the two loads). A new holder resets
            // the pin after claiming, so clearing this exact value cannot drop a live pin.
            _ = pinWord(slot).compareExchange(expected: pin, desired: 0, ordering: .sequentiallyConsistent)
        }
        return false
    }

    /// Every claimed slot as it is now (diagnostics: `boxwood readers`).
    func claimedSlots() -> [(slot: Int, holder: UInt64, pin: UInt64, claimedAt: UInt64)] {
        (0..<SharedHeader.slotCount).compactMap { slot in
            let holder = holderWord(slot).load(ordering: .sequentiallyConsistent)
            guard holder != 0 else { return nil }
            return (slot, holder, pinWord(slot).load(ordering: .sequentiallyConsistent), claimedAtWord(slot).load(ordering: .relaxed))
        }
    }

    /// Frees `slot` if `holder`, which must be dead, still holds it; true when it did. A compare-and-swap from
    /// that exact identity, so a slot a live process claimed meanwhile is never freed. The pin is left: the next
    /// claimer resets it, and a checkpoint clears a pin whose slot has no live holder (``hasLiveReader``).
    func freeSlotOfDeadHolder(_ slot: Int, holder: UInt64) -> Bool {
        guard !file.isHolderAlive(holder) else { return false }
        return holderWord(slot).compareExchange(expected: holder, desired: 0, ordering: .sequentiallyConsistent).exchanged
    }

    /// Pins in use right now (diagnostics and tests).
    func pinnedGenerations() -> [UInt64] {
        (0..<SharedHeader.slotCount).compactMap { slot in
            let pin = pinWord(slot).load(ordering: .sequentiallyConsistent)
            return pin == 0 ? nil : pin - 1
        }
    }
}
