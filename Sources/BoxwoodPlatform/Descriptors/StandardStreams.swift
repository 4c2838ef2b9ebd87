import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's stdin and stdout, taken over for a protocol (a child process that talks to its parent over them).
// @frozen: so that code in other modules may move each end out on its own (partial consumption).
@frozen
public struct TakenStandardStreams: ~Copyable {
    /// What was stdin, now a close-on-exec descriptor of the caller's.
    public var input: OwnedDescriptor
    /// What was stdout, now a close-on-exec descriptor of the caller's.
    public var output: OwnedDescriptor

    /// Moves stdin and stdout to new close-on-exec descriptors the caller owns, then points stdout at stderr and stdin
    /// at `/dev/null`, so that a stray `print` or read cannot corrupt the protocol.
    public static func take() throws(Errno) -> TakenStandardStreams {
        let input = try duplicateAboveStandardStreams(.standardInput)
        let output = try duplicateAboveStandardStreams(.standardOutput)
        do {
            _ = try FileDescriptor.standardError.duplicate(as: .standardOutput, retryOnInterrupt: true)
            let null = OwnedDescriptor(taking: try FileDescriptor.open("/dev/null", .readOnly, options: [.closeOnExec]))
            _ = try null.descriptor.duplicate(as: .standardInput, retryOnInterrupt: true)
            try null.close()
        } catch {
            throw error as? Errno ?? .ioError
        }
        return TakenStandardStreams(input: input, output: output)
    }

    private static func duplicateAboveStandardStreams(_ descriptor: FileDescriptor) throws(Errno) -> OwnedDescriptor {
        let copy = fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw Errno(rawValue: errno) }
        return OwnedDescriptor(takingRaw: copy)
    }
}
