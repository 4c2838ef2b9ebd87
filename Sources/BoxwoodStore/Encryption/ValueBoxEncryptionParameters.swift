import Foundation

/// The key a database is encrypted under, as Postbox's `ValueBoxEncryptionParameters` has it: a caller's
/// 32-byte key and 16-byte salt. Neither is ever written to disk; the data file keeps the salt in the
/// clear (it is not secret) and a key check value that tells a wrong key from a damaged file.
///
/// Every process that opens one database must pass the same parameters. See docs/encryption.md for what
/// is and is not protected.
public struct ValueBoxEncryptionParameters: Sendable, Equatable {
    /// A 256-bit key.
    public struct Key: Sendable, Equatable {
        /// The key's 32 bytes.
        public let data: Data

        /// Nil unless `data` is exactly 32 bytes.
        public init?(data: Data) {
            guard data.count == 32 else { return nil }
            self.data = data
        }

        /// Nil unless `bytes` is exactly 32 bytes.
        public init?(bytes: [UInt8]) { self.init(data: Data(bytes)) }
    }

    /// A 128-bit salt, mixed into every key the database derives.
    public struct Salt: Sendable, Equatable {
        /// The salt's 16 bytes.
        public let data: Data

        /// Nil unless `data` is exactly 16 bytes.
        public init?(data: Data) {
            guard data.count == 16 else { return nil }
            self.data = data
        }

        /// Nil unless `bytes` is exactly 16 bytes.
        public init?(bytes: [UInt8]) { self.init(data: Data(bytes)) }
    }

    /// When the database exists and is not encrypted: true encrypts it in place on open (crash-safely: a
    /// kill leaves either the old plain or the new encrypted database), false opens it as it is, as
    /// Postbox does.
    public var forceEncryptionIfNoSet: Bool
    public var key: Key
    public var salt: Salt

    public init(forceEncryptionIfNoSet: Bool, key: Key, salt: Salt) {
        self.forceEncryptionIfNoSet = forceEncryptionIfNoSet
        self.key = key
        self.salt = salt
    }
}
