import Crypto
import Foundation

/// The keys one encrypted data file and its logs are sealed under, derived from the caller's key and salt
/// (``ValueBoxEncryptionParameters``) and the file's random 16-byte id (kept in its ``EncryptionHeader``):
///
///     fileKey  = HKDF-SHA256(ikm: key, salt: salt, info: "boxwood file v1" ‖ fileId)
///     pageKey  = HKDF-SHA256(ikm: fileKey, info: "boxwood pages")
///     walKey   = HKDF-SHA256(ikm: fileKey, info: "boxwood wal" ‖ walSalt (8 bytes LE))
///     keyCheck = HMAC-SHA256(HKDF-SHA256(ikm: fileKey, info: "boxwood key check"), "boxwood key check v1")[0..<16]
///
/// A new file (created, compacted, rekeyed, exported) draws a new id, so no two files share a page key, and
/// every checkpoint's new WAL salt gives its log a new key: a nonce is never reused across them (see
/// `PageCipher` and `RecordCipher` for the nonces within one key). The key check value proves the key
/// before any page is opened, so a wrong key is reported as such and never mistaken for damage.
struct DatabaseKeys {
    static let fileIdSize = 16
    static let keyCheckSize = 16

    let pageKey: SymmetricKey
    let keyCheck: [UInt8]
    private let fileKey: SymmetricKey

    init(parameters: ValueBoxEncryptionParameters, fileId: [UInt8]) {
        fileKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: parameters.key.data),
                                         salt: parameters.salt.data,
                                         info: Array("boxwood file v1".utf8) + fileId, outputByteCount: 32)
        pageKey = DatabaseKeys.subkey(fileKey, info: Array("boxwood pages".utf8))
        let checkKey = DatabaseKeys.subkey(fileKey, info: Array("boxwood key check".utf8))
        let code = HMAC<SHA256>.authenticationCode(for: Array("boxwood key check v1".utf8), using: checkKey)
        keyCheck = Array(code.prefix(DatabaseKeys.keyCheckSize))
    }

    /// The key of the WAL whose header carries `walSalt`.
    func walKey(walSalt: UInt64) -> SymmetricKey {
        var info = Array("boxwood wal".utf8)
        withUnsafeBytes(of: walSalt.littleEndian) { info.append(contentsOf: $0) }
        return DatabaseKeys.subkey(fileKey, info: info)
    }

    /// A new random file id.
    static func randomFileId() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<fileIdSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    private static func subkey(_ key: SymmetricKey, info: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: info, outputByteCount: 32)
    }
}
