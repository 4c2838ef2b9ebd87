import CBoxwoodPlatform
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two ends of a new pipe, each with its owner. Both are close-on-exec, so a process spawned by any thread
/// inherits neither unless it is handed one on purpose (a child that kept the write end of its own stdout pipe
/// open would hide its death: its reader would never see end of file).
// @frozen: so that code in other modules may move each end out on its own (partial consumption).
@frozen
public struct PipeDescriptors: ~Copyable {
    /// The end bytes are read from.
    public var readEnd: OwnedDescriptor
    /// The end bytes are written to.
    public var writeEnd: OwnedDescriptor

    /// Creates a pipe.
    public init() throws(Errno) {
        var raw: [CInt] = [-1, -1]
        #if os(Linux)
        // Atomic close-on-exec: pipe2(O_CLOEXEC).
        guard boxwood_pipe_cloexec(&raw) == 0 else { throw Errno(rawValue: errno) }
        readEnd = OwnedDescriptor(takingRaw: raw[0])
        writeEnd = OwnedDescriptor(takingRaw: raw[1])
        #else
        // Darwin has no pipe2: the flag is set right after. Children spawned through ``ChildProcess`` are started
        // with POSIX_SPAWN_CLOEXEC_DEFAULT, so this short window cannot leak the pipe into them.
        guard pipe(&raw) == 0 else { throw Errno(rawValue: errno) }
        readEnd = OwnedDescriptor(takingRaw: raw[0])
        writeEnd = OwnedDescriptor(takingRaw: raw[1])
        guard fcntl(raw[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(raw[1], F_SETFD, FD_CLOEXEC) == 0 else {
            throw Errno(rawValue: errno)
        }
        #endif
    }
}
