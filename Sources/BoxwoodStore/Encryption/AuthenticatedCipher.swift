import Crypto
import Foundation

/// The one place bytes meet AES-256-GCM, for pages (`PageCipher`) and WAL records (`RecordCipher`): each decides its
/// nonce, associated data and where the tag goes; this seals and opens. swift-crypto's API takes and returns `Data`,
/// so sealing copies the ciphertext out of one and opening copies the plaintext out of another — here, in one place,
/// to remove once an in-place API exists (docs/benchmarks.md, "Encryption", shows what those copies cost).
struct AuthenticatedCipher {
    static let nonceSize = 12
    static let tagSize = 16

    let key: SymmetricKey

    /// Encrypts the `count` bytes at `plain` into `count` bytes at `output` (which may be `plain` itself) and writes
    /// the tag's `tagSize` bytes at `tag`. `nonce` is `nonceSize` bytes. `operation` names the work in the error.
    func seal<Nonce: DataProtocol, AssociatedData: DataProtocol>(
        _ plain: UnsafeRawPointer, count: Int, nonce: Nonce, associatedData: AssociatedData,
        into output: UnsafeMutableRawPointer, tag: UnsafeMutableRawPointer, operation: @autoclosure () -> String
    ) throws(BoxwoodError) {
        do {
            let box = try AES.GCM.seal(UnsafeRawBufferPointer(start: plain, count: count), using: key,
                                       nonce: try AES.GCM.Nonce(data: nonce), authenticating: associatedData)
            box.ciphertext.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: count)
            box.tag.copyBytes(to: tag.assumingMemoryBound(to: UInt8.self), count: AuthenticatedCipher.tagSize)
        } catch {
            throw .cryptographyFailed(operation: operation(), reason: "\(error)")
        }
    }

    /// Decrypts the `count` bytes at `ciphertext`, with the tag at `tag`, into `count` bytes at `output` (which may
    /// be `ciphertext` itself). False when they do not authenticate (damaged, moved, or sealed under another key);
    /// `output` is then left as it was.
    func open<Nonce: DataProtocol, AssociatedData: DataProtocol>(
        _ ciphertext: UnsafeRawPointer, count: Int, nonce: Nonce, tag: UnsafeRawPointer, associatedData: AssociatedData,
        into output: UnsafeMutableRawPointer
    ) -> Bool {
        guard let nonce = try? AES.GCM.Nonce(data: nonce),
              let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: UnsafeRawBufferPointer(start: ciphertext, count: count),
                                               tag: UnsafeRawBufferPointer(start: tag, count: AuthenticatedCipher.tagSize)),
              let plain = try? AES.GCM.open(box, using: key, authenticating: associatedData),
              plain.count == count else { return false }
        plain.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: count)
        return true
    }
}
