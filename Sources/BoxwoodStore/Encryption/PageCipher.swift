import Crypto
import Foundation

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
/// Associated data: "BXWP" ‖ page number (8 bytes LE). A page copied to another slot, or into another file
/// (another file id, another key), fails to open.
///
/// Nonces never repeat under one key: each `PageCipher` draws a random 64-bit session on creation and counts
/// the pages it seals, drawing a new session before the counter would wrap. Every writer — a value box in any
/// process, the same one after a crash, a compaction — seals through its own `PageCipher`, so a repeat needs
/// two sessions drawing the same 64 random bits under one file key (about 2^-64 per pair of sessions); the
/// per-file key (`DatabaseKeys`) keeps files apart. Rewriting a page in place (a checkpoint redone after a
/// crash, a reused free page) seals it with a new nonce.
final class PageCipher {
    static let nonceSize = 12
    static let tagSize = 16
    static let trailerSize = 32
    /// Bytes one page takes on disk.
    static let slotSize = PageLayout.pageSize + trailerSize

    private let key: SymmetricKey
    private var session: UInt64
    private var counter: UInt32 = 0

    init(key: SymmetricKey) {
        self.key = key
        session = UInt64.random(in: 0...UInt64.max)
    }

    /// Encrypts the plain page at `page` as page `pageNumber` into the `slotSize` bytes at `slot`.
    func seal(_ page: UnsafeRawPointer, pageNumber: UInt64, into slot: UnsafeMutableRawPointer) throws(BoxwoodError) {
        if counter == .max {
            session = UInt64.random(in: 0...UInt64.max)
            counter = 0
        }
        counter += 1
        let trailer = slot + PageLayout.pageSize
        store64(trailer, 0, session)
        store32(trailer, 8, counter)
        store32(trailer, PageCipher.nonceSize + PageCipher.tagSize, 0)
        do {
            let nonce = try AES.GCM.Nonce(data: UnsafeRawBufferPointer(start: trailer, count: PageCipher.nonceSize))
            let box = try AES.GCM.seal(UnsafeRawBufferPointer(start: page, count: PageLayout.pageSize), using: key,
                                          nonce: nonce, authenticating: PageCipher.associatedData(pageNumber))
            box.ciphertext.copyBytes(to: slot.assumingMemoryBound(to: UInt8.self), count: PageLayout.pageSize)
            box.tag.copyBytes(to: (trailer + PageCipher.nonceSize).assumingMemoryBound(to: UInt8.self), count: PageCipher.tagSize)
        } catch {
            throw .cryptographyFailed(operation: "sealing page \(pageNumber)", reason: "\(error)")
        }
    }

    /// Decrypts the slot at `slot` — read as page `pageNumber` — into the 4096 bytes at `page`. False when the
    /// slot does not authenticate: damaged, torn, moved from another place or file, or sealed under another key.
    func open(_ slot: UnsafeRawPointer, pageNumber: UInt64, into page: UnsafeMutableRawPointer) -> Bool {
        let trailer = slot + PageLayout.pageSize
        guard let nonce = try? AES.GCM.Nonce(data: UnsafeRawBufferPointer(start: trailer, count: PageCipher.nonceSize)),
              let box = try? AES.GCM.SealedBox(
                nonce: nonce, ciphertext: UnsafeRawBufferPointer(start: slot, count: PageLayout.pageSize),
                tag: UnsafeRawBufferPointer(start: trailer + PageCipher.nonceSize, count: PageCipher.tagSize)),
              let plain = try? AES.GCM.open(box, using: key, authenticating: PageCipher.associatedData(pageNumber)),
              plain.count == PageLayout.pageSize else { return false }
        plain.copyBytes(to: page.assumingMemoryBound(to: UInt8.self), count: PageLayout.pageSize)
        return true
    }

    private static func associatedData(_ pageNumber: UInt64) -> [UInt8] {
        var bytes: [UInt8] = Array("BXWP".utf8)
        withUnsafeBytes(of: pageNumber.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }
}
