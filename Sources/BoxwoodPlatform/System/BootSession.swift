#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The running boot of the machine: an identifier that changes whenever the machine restarts (after a power cut
/// or an OS crash too), and only then.
///
/// Storage uses it to know whether its files can have lost writes since they were written: within one boot every
/// `write` that returned is in the page cache and visible to every process, whatever reached the disk; across a
/// restart only synced writes are certain.
public enum BootSession {
    /// The identifier's bytes (Linux: `/proc/sys/kernel/random/boot_id`; Darwin: the `kern.bootsessionuuid`
    /// sysctl); nil where the system does not tell, and then nothing may be concluded from it. Read once per process.
    public static let identifier: [UInt8]? = readIdentifier()

    private static func readIdentifier() -> [UInt8]? {
        #if os(Linux)
        guard let text = readSmallFile("/proc/sys/kernel/random/boot_id") else { return nil }
        let trimmed = Array(text.utf8.filter { $0 != UInt8(ascii: "\n") })
        return trimmed.count >= 16 ? trimmed : nil
        #elseif canImport(Darwin)
        var size = 0
        guard sysctlbyname("kern.bootsessionuuid", nil, &size, nil, 0) == 0, size > 1 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard sysctlbyname("kern.bootsessionuuid", &bytes, &size, nil, 0) == 0 else { return nil }
        let text = bytes.prefix(while: { $0 != 0 })
        return text.count >= 16 ? Array(text) : nil
        #else
        return nil
        #endif
    }
}
