import SystemPackage

/// An open file descriptor together with the duty to close it.
///
/// Invariant kept here: **a descriptor has exactly one owner, and is closed exactly once, by that owner.** The type is
/// noncopyable, so the compiler enforces the first half: ownership moves with `consume` (into a channel, a reader
/// thread, a spawned child's table) and the value it moved out of can no longer be used. The second half follows:
/// the descriptor is closed by ``close()`` or, if the owner never called it, when the owner lets the value go.
///
/// Why it matters: descriptor numbers are reused at once. A second `close` of the same number — one owner closing
/// "its" copy after another already did — closes whatever file was opened under that number in the meantime. That
/// is how the demo's restarted sync client lost its stdin (issue 28): the parent closed the old child's pipes when
/// it reaped it, the old pipe channel closed them again a moment later, and by then the new child's pipes had the
/// same numbers.
///
/// ``descriptor`` is lent for reads, writes and polls while this value lives; never close it or keep it beyond
/// the owner's lifetime.
public struct OwnedDescriptor: ~Copyable, Sendable {
    /// The open descriptor, lent for I/O. Closing it is this value's job alone.
    public let descriptor: FileDescriptor

    /// Takes ownership of `descriptor`: from now on only this value closes it.
    public init(taking descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Takes ownership of the raw descriptor `rawValue` (as returned by a C call).
    public init(takingRaw rawValue: CInt) {
        self.descriptor = FileDescriptor(rawValue: rawValue)
    }

    /// Closes the descriptor now and reports a failure. The number is released even when `close` fails (Linux and
    /// Darwin release it on every path, EINTR included), so a failed close is never retried.
    public consuming func close() throws(Errno) {
        let descriptor = self.descriptor
        discard self
        do {
            try descriptor.close()
        } catch let error as Errno {
            throw error
        } catch {
            throw Errno.ioError
        }
    }

    deinit {
        // The owner dropped the value without `close()`: close it here. There is nobody to report a failure to, and
        // the number is released either way.
        _ = try? descriptor.close()
    }
}
