import BoxwoodPlatform
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether `raw` names an open descriptor of this process.
func isOpen(_ raw: CInt) -> Bool {
    fcntl(raw, F_GETFD) != -1
}

/// What `raw` names — its device and inode — or nil when it is not open.
func identity(_ raw: CInt) -> [UInt64]? {
    var status = stat()
    guard fstat(raw, &status) == 0 else { return nil }
    return [UInt64(status.st_dev), UInt64(status.st_ino)]
}

/// Whether `raw` still names the object whose identity was `before`. A descriptor number that was closed can be
/// reused at once by a test running in parallel, so "the number is open" does not mean "it was not closed".
func stillNames(_ raw: CInt, _ before: [UInt64]?) -> Bool {
    guard let before, let now = identity(raw) else { return false }
    return now == before
}

@Suite("owned descriptors")
struct OwnedDescriptorTests {
    @Test("close() closes the descriptor, and dropping an owner closes it too")
    func closesOnce() throws {
        let pipe = try PipeDescriptors()
        let readRaw = pipe.readEnd.descriptor.rawValue
        let writeRaw = pipe.writeEnd.descriptor.rawValue
        #expect(isOpen(readRaw) && isOpen(writeRaw))
        let readIdentity = identity(readRaw), writeIdentity = identity(writeRaw)
        try pipe.readEnd.close()
        #expect(!stillNames(readRaw, readIdentity))
        do {
            _ = consume pipe.writeEnd
        }
        #expect(!stillNames(writeRaw, writeIdentity))
    }

    @Test("a pipe's descriptors are close-on-exec from the start")
    func pipesAreCloseOnExec() throws {
        let pipe = try PipeDescriptors()
        #expect(fcntl(pipe.readEnd.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(pipe.writeEnd.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("dropping what is left of an owner closes only what it still owns")
    func droppingTheRestClosesNothingElse() throws {
        // The failure of issue 28 in miniature: one end of a pipe moved to a new owner and closed there; the numbers
        // are handed out again; what is left of the first owner is dropped. Ownership moved, so nothing remembers
        // the moved end to close it a second time — the new pipe, whatever numbers it got, stays open.
        let first = try PipeDescriptors()
        let reader = first.readEnd
        try reader.close()
        let second = try PipeDescriptors()
        let secondNumbers = [second.readEnd.descriptor.rawValue, second.writeEnd.descriptor.rawValue]
        _ = consume first.writeEnd
        #expect(secondNumbers.allSatisfy(isOpen), "dropping the first pipe closed a descriptor of the second")
        let bytes: [UInt8] = Array("ping".utf8)
        _ = try bytes.withUnsafeBytes { try second.writeEnd.descriptor.writeAll($0) }
        var buffer = [UInt8](repeating: 0, count: 4)
        let n = try buffer.withUnsafeMutableBytes { try second.readEnd.descriptor.read(into: $0) }
        #expect(n == 4 && buffer == bytes)
    }
}
