import BoxwoodPlatform

/// A 64-bit digest of the running boot (``BootSession/identifier``), as the shared header stores it.
enum BootDigest {
    /// The running boot's digest; 0 where the system does not identify boots (then no header ever claims the
    /// running boot, and recovery relies on what the WAL records prove).
    static let current: UInt64 = {
        guard let identifier = BootSession.identifier else { return 0 }
        // An identifier holds at least 16 bytes (`BootSession`), so its bytes have an address.
        let digest = identifier.withUnsafeBytes { XXH64.hash($0.baseAddress!, $0.count, seed: 0x424F_4F54) }
        return digest == 0 ? 1 : digest
    }()
}
