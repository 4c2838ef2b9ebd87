import Crypto

/// Seals the payloads of an encrypted database's WAL records with AES-256-GCM under the key of one log
/// (`DatabaseKeys.walKey(walSalt:)`: every checkpoint's reset draws a new salt, hence a new key).
///
/// In an encrypted log the record header's `payloadChecksum` field holds 8 random bytes instead, and the
/// payload is followed by its 16-byte tag (see `WriteAheadLog`). Nonce: those 8 bytes ‖ the record's offset
/// in the log (4 bytes LE, truncated). Associated data: header bytes 0..<16 (length, operations, sequence) ‖
/// offset (8 bytes LE). A record moved to another offset or log, replayed into another database, or changed
/// in any byte fails to open; the header checksum and whitening still tell a torn tail from mid-log damage
/// without the key, exactly as in a plain log.
///
/// Nonces never repeat under one log's key: a record rewritten at the same offset (after a torn tail is cut
/// or a failed commit is rolled back) draws new random bytes, so a repeat needs two records of one log at
/// offsets equal modulo 2^32 drawing the same 64 random bits.
final class RecordCipher {
    static let tagSize = AuthenticatedCipher.tagSize

    private let cipher: AuthenticatedCipher

    init(key: SymmetricKey) { cipher = AuthenticatedCipher(key: key) }

    /// A fresh random value for the header's nonce field.
    static func randomNonceField() -> UInt64 { UInt64.random(in: 0...UInt64.max) }

    /// Encrypts the `payloadLength` bytes at `payload` in place and writes the tag right after them. `header`
    /// holds the record's first 16 bytes (filled in) and `nonceField` the value stored in bytes 16..<24.
    func seal(header: UnsafeRawPointer, nonceField: UInt64, offset: UInt64, payload: UnsafeMutableRawPointer,
              payloadLength: Int) throws(BoxwoodError) {
        try cipher.seal(payload, count: payloadLength, nonce: RecordCipher.nonce(nonceField, offset),
                        associatedData: RecordCipher.associatedData(header, offset), into: payload, tag: payload + payloadLength,
                        operation: "sealing the WAL record at offset \(offset)")
    }

    /// Decrypts the payload at `payload` (its tag right after it) in place. False when it does not authenticate.
    func open(header: UnsafeRawPointer, nonceField: UInt64, offset: UInt64, payload: UnsafeMutableRawPointer,
              payloadLength: Int) -> Bool {
        cipher.open(payload, count: payloadLength, nonce: RecordCipher.nonce(nonceField, offset), tag: payload + payloadLength,
                    associatedData: RecordCipher.associatedData(header, offset), into: payload)
    }

    private static func nonce(_ field: UInt64, _ offset: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: AuthenticatedCipher.nonceSize)
        withUnsafeBytes(of: field.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: offset).littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        return bytes
    }

    private static func associatedData(_ header: UnsafeRawPointer, _ offset: UInt64) -> [UInt8] {
        var bytes = Array(UnsafeRawBufferPointer(start: header, count: 16))
        withUnsafeBytes(of: offset.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }
}
