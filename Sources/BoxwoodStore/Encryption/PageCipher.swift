import Crypto

/// Seals data-file pages with AES-256-GCM under a file's page key (see `DatabaseKeys`), and opens them.
///
/// An encrypted page takes a slot of `slotSize` bytes on disk: the 4096 bytes of the page (its plain form,
/// checksum included, exactly as an unencrypted file would hold it) encrypted, then a 32-byte trailer:
///
///     offset size field
///     0      4096 ciphertext  the page
///     4096   12   nonce       session (8 bytes, random per `PageCipher`) ‖ counter (4 bytes LE)
///     4108   16   tag         GCM tag over the ciphertext and the associated data
///     4124   4    reserved    zero
///
/// Associated data: "BXWP" ‖ write tag (4 bytes LE) ‖ page number (8 bytes LE) — the page's disk reference (see
/// `PageRef`). A page copied to another slot, or into another file (another file id, another key), fails to open;
/// so does an older version of the page put back in its slot, as the reference its parent holds carries the tag of
/// the version it points at (the checkpoint generation that wrote it, modulo 2^23). Meta pages, the root of the
/// references, are sealed with tag 0.
///
/// Nonces never repeat under one key: each `PageCipher` draws a random 64-bit session on creation and counts
/// the pages it seals, drawing a new session before the counter would wrap. Every writer — a value box in any
/// process, the same one after a crash, a compaction — seals through its own `PageCipher`, so a repeat needs
/// two sessions drawing the same 64 random bits under one file key (about 2^-64 per pair of sessions); the
/// per-file key (`DatabaseKeys`) keeps files apart. Rewriting a page in place (a checkpoint redone after a
/// crash, a reused free page) seals it with a new nonce.
final class PageCipher {
    static let nonceSize = AuthenticatedCipher.nonceSize
    static let tagSize = AuthenticatedCipher.tagSize
    static let trailerSize = 32
    /// Bytes one page takes on disk.
    static let slotSize = PageLayout.pageSize + trailerSize

    private let cipher: AuthenticatedCipher
    private var session: UInt64
    private var counter: UInt32 = 0

    init(key: SymmetricKey) {
        cipher = AuthenticatedCipher(key: key)
        session = UInt64.random(in: 0...UInt64.max)
    }

    /// Encrypts the plain page at `page` as the page `reference` names (its page number and write tag) into the
    /// `slotSize` bytes at `slot`.
    func seal(_ page: UnsafeRawPointer, as reference: UInt64, into slot: UnsafeMutableRawPointer) throws(BoxwoodError) {
        if counter == .max {
            session = UInt64.random(in: 0...UInt64.max)
            counter = 0
        }
        counter += 1
        let trailer = slot + PageLayout.pageSize
        store64(trailer, 0, session)
        store32(trailer, 8, counter)
        store32(trailer, PageCipher.nonceSize + PageCipher.tagSize, 0)
        var associated = PageCipher.associatedData(reference)
        try withUnsafeBytes(of: &associated) { (bytes) throws(BoxwoodError) in
            try cipher.seal(page, count: PageLayout.pageSize, nonce: UnsafeRawBufferPointer(start: trailer, count: PageCipher.nonceSize),
                            associatedData: bytes, into: slot, tag: trailer + PageCipher.nonceSize,
                            operation: "sealing page \(reference.diskPageNumber)")
        }
    }

    /// Decrypts the slot at `slot` — read as the page `reference` names — into the 4096 bytes at `page`. False when
    /// the slot does not authenticate: damaged, torn, moved from another place or file, another version of the page
    /// than the reference's write tag names, or sealed under another key.
    func open(_ slot: UnsafeRawPointer, as reference: UInt64, into page: UnsafeMutableRawPointer) -> Bool {
        let trailer = slot + PageLayout.pageSize
        var associated = PageCipher.associatedData(reference)
        return withUnsafeBytes(of: &associated) { bytes in
            cipher.open(slot, count: PageLayout.pageSize, nonce: UnsafeRawBufferPointer(start: trailer, count: PageCipher.nonceSize),
                        tag: trailer + PageCipher.nonceSize, associatedData: bytes, into: page)
        }
    }

    /// "BXWP" ‖ write tag (u32 LE) ‖ page number (u64 LE): 16 bytes, two words with no padding between them.
    private static func associatedData(_ reference: UInt64) -> (UInt64, UInt64) {
        ((0x5057_5842 | UInt64(reference.writeTag) << 32).littleEndian, reference.diskPageNumber.littleEndian)
    }
}
