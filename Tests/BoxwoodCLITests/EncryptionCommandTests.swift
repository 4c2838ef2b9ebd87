import BoxwoodStore
import Foundation
import Testing

/// `--key-file` on the subcommands that open a database, and `boxwood rekey`: an encrypted database is readable
/// with its key only, a wrong or malformed key file is exit 2 naming the file, rekey and decrypt work.
@Suite("boxwood --key-file and rekey")
struct EncryptionCommandTests {
    static let keyBytes: [UInt8] = (0..<48).map { UInt8($0 &* 5 &+ 3) }
    static let otherKeyBytes: [UInt8] = (0..<48).map { UInt8($0 &* 5 &+ 4) }

    static func parameters(_ bytes: [UInt8]) -> ValueBoxEncryptionParameters {
        ValueBoxEncryptionParameters(forceEncryptionIfNoSet: false, key: ValueBoxEncryptionParameters.Key(bytes: Array(bytes.prefix(32)))!,
                                     salt: ValueBoxEncryptionParameters.Salt(bytes: Array(bytes.suffix(16)))!)
    }

    /// A database holding table 1, key "hello" → `value`, encrypted under `key` (plain when nil).
    static func makeDatabase(_ path: String, key: [UInt8]?, value: String) throws {
        var options = ValueBoxOptions()
        options.encryption = key.map(parameters)
        let box = try ValueBox(path: path, options: options)
        try box.begin()
        try box.set(ValueBoxTable(id: 1, keyType: .binary), key: ValueBoxKey(Array("hello".utf8)), value: MemoryBuffer(Array(value.utf8)))
        try box.commit()
        try box.close()
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test("an encrypted database round-trips through the CLI with its key file, raw or hex")
    func keyFile() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let raw = dir.path("key.bin")
        let hexFile = dir.path("key.hex")
        let other = dir.path("other.bin")
        try Data(Self.keyBytes).write(to: URL(fileURLWithPath: raw))
        try Data((Self.hex(Array(Self.keyBytes.prefix(24))) + "\n" + Self.hex(Array(Self.keyBytes.suffix(24))) + "\n").utf8)
            .write(to: URL(fileURLWithPath: hexFile))
        try Data(Self.otherKeyBytes).write(to: URL(fileURLWithPath: other))

        try Self.makeDatabase(db, key: Self.keyBytes, value: "secret value")
        let put = try CLI.run(["put", db, "1", "other", "second value", "--key-file", raw])
        #expect(put.status == 0, "\(put.stderr)")
        let get = try CLI.run(["get", db, "1", "hello", "--key-file", hexFile])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.output == "secret value")
        #expect(try CLI.run(["get", db, "1", "other", "--key-file", raw]).output == "second value")
        let stat = try CLI.run(["stat", db, "--json", "--key-file", raw])
        let json = try JSONSerialization.jsonObject(with: stat.stdout) as? [String: Any]
        #expect(json?["encrypted"] as? Bool == true)
        #expect(try CLI.run(["check", db, "--key-file", raw]).status == 0)

        let noKey = try CLI.run(["get", db, "1", "hello"])
        #expect(noKey.status == 2)
        #expect(noKey.stderr.contains("encrypted"), "\(noKey.stderr)")
        let wrong = try CLI.run(["dump", db, "--key-file", other])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("another key"), "\(wrong.stderr)")

        let missingFile = try CLI.run(["dump", db, "--key-file", dir.path("nowhere")])
        #expect(missingFile.status == 2)
        #expect(missingFile.stderr.contains(dir.path("nowhere")), "\(missingFile.stderr)")
        let short = dir.path("short.bin")
        try Data(Array(Self.keyBytes.prefix(40))).write(to: URL(fileURLWithPath: short))
        let malformed = try CLI.run(["dump", db, "--key-file", short])
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("40 bytes"), "\(malformed.stderr)")
    }

    @Test("rekey moves a database to a new key, encrypts a plain one and decrypts")
    func rekey() throws {
        let dir = try TempDir()
        let db = dir.path("db")
        let first = dir.path("first.bin")
        let second = dir.path("second.bin")
        try Data(Self.keyBytes).write(to: URL(fileURLWithPath: first))
        try Data(Self.otherKeyBytes).write(to: URL(fileURLWithPath: second))
        try Self.makeDatabase(db, key: nil, value: "v1")

        let encrypt = try CLI.run(["rekey", db, "--new-key-file", first])
        #expect(encrypt.status == 0, "\(encrypt.stderr)")
        #expect(try CLI.run(["get", db, "1", "hello"]).status == 2)
        #expect(try CLI.run(["get", db, "1", "hello", "--key-file", first]).output == "v1")

        let change = try CLI.run(["rekey", db, "--key-file", first, "--new-key-file", second, "--json"])
        #expect(change.status == 0, "\(change.stderr)")
        #expect(try CLI.run(["get", db, "1", "hello", "--key-file", first]).status == 2)
        #expect(try CLI.run(["get", db, "1", "hello", "--key-file", second]).output == "v1")

        let backup = try CLI.run(["backup", db, dir.path("plain-copy"), "--key-file", second, "--decrypt"])
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(try CLI.run(["get", dir.path("plain-copy"), "1", "hello"]).output == "v1")

        let decrypt = try CLI.run(["rekey", db, "--key-file", second, "--decrypt"])
        #expect(decrypt.status == 0, "\(decrypt.stderr)")
        #expect(try CLI.run(["get", db, "1", "hello"]).output == "v1")

        let neither = try CLI.run(["rekey", db])
        #expect(neither.status == 2)
    }
}
