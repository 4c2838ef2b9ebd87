import ArgumentParser
import BoxwoodStore
import SystemPackage

/// `--key-file PATH`: the key and salt of an encrypted database (docs/encryption.md), for every subcommand that
/// opens one. The file holds either 48 raw bytes — the 32-byte key, then the 16-byte salt — or the same 48 bytes as
/// 96 hex digits (whitespace ignored). Keep it readable by its owner only.
struct EncryptionOptions: ParsableArguments {
    @Option(name: .customLong("key-file"),
            help: "The database's key and salt: 48 bytes (32-byte key, then 16-byte salt), raw or as 96 hex digits.")
    var keyFile: String?

    /// The parameters the key file holds, or nil without `--key-file`; a file that cannot be read or does not hold a
    /// key and a salt is bad input (exit 2), naming the file.
    func parameters() throws(CommandFailure) -> ValueBoxEncryptionParameters? {
        guard let keyFile else { return nil }
        return try EncryptionOptions.readKeyFile(keyFile, option: "--key-file")
    }

    /// Reads a key file (see the type's documentation); `option` names the flag in messages.
    static func readKeyFile(_ path: String, option: String) throws(CommandFailure) -> ValueBoxEncryptionParameters {
        let bytes: [UInt8]
        do {
            let descriptor = try FileDescriptor.open(FilePath(path), .readOnly)
            defer { try? descriptor.close() }
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            bytes = Array(buffer.prefix(count))
        } catch let error as Errno {
            throw CommandFailure(status: ExitStatus.badInput, "\(option): cannot read the key file: \(error.description)", place: path)
        } catch {
            throw CommandFailure(status: ExitStatus.badInput, "\(option): cannot read the key file: \(error)", place: path)
        }
        guard let material = keyMaterial(bytes) else {
            throw CommandFailure(status: ExitStatus.badInput,
                                 "\(option): the key file holds \(bytes.count) bytes, expected 48 raw bytes (a 32-byte key, then a 16-byte salt) or 96 hex digits",
                                 place: path)
        }
        guard let key = ValueBoxEncryptionParameters.Key(bytes: Array(material.prefix(32))) else {
            throw CommandFailure(status: ExitStatus.badInput, "\(option): the key must be 32 bytes", place: path)
        }
        guard let salt = ValueBoxEncryptionParameters.Salt(bytes: Array(material.suffix(from: 32))) else {
            throw CommandFailure(status: ExitStatus.badInput, "\(option): the salt must be 16 bytes", place: path)
        }
        return ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false, key: key, salt: salt)
    }

    /// The 48 bytes of a key file: the file itself when it is 48 bytes, else its hex digits when there are 96
    /// (whitespace ignored); nil otherwise.
    static func keyMaterial(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.count == 48 { return bytes }
        let digits = bytes.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        guard digits.count == 96 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(48)
        var index = 0
        while index < 96 {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
