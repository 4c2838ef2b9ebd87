import ArgumentParser
import BoxwoodStore

/// The entry that `get`, `put` and `del` address: `DB TABLE KEY`, and the form of KEY.
///
/// Key forms (one scheme for the three commands): KEY is UTF-8 text by default (a binary table's key is its
/// bytes); `--hex` reads it as hex bytes (a binary key); `--int64` as a signed decimal 64-bit integer (a key of
/// an int64 table, ``ValueBoxKey/init(int64:)``). A TABLE or KEY that starts with `-` (a negative int64 key)
/// must follow `--` (`boxwood get --int64 DB 1 -- -5`), or it is taken for an option. `get` names its output
/// flag `--hex-output` and `put` its value flag `--hex-value`, so `--hex` always means the key.
///
/// Bad input exits with 2 and a message, before the database is opened: a key that does not parse (odd or
/// non-hex digits, an integer out of the Int64 range), a key longer than ``ValueBox/maxKeySize`` bytes
/// (``BoxwoodError/keyTooLarge(length:limit:)``) and a negative TABLE (ids below zero belong to the engine:
/// ``BoxwoodError/reservedTableId(id:)``). A key form that does not match the table's key type is the engine's
/// ``BoxwoodError/keyTypeMismatch(table:existing:requested:)``, also exit 2.
struct EntryAddress: ParsableArguments {
    @Argument(help: "The database directory (it must exist).") var db: String
    @Argument(help: "The table id, a decimal number from 0 up (negative ids belong to the engine).") var table: Int32
    @Argument(help: "The key: UTF-8 text; with --hex, hex bytes; with --int64, a signed decimal integer. One starting with '-' goes after '--'.")
    var key: String
    @Flag(help: "KEY is hex bytes (a binary table's key).") var hex = false
    @Flag(help: "KEY is a signed 64-bit decimal integer (an int64 table's key).") var int64 = false

    func validate() throws {
        if hex && int64 { throw ValidationError("--hex and --int64 are two key forms; give at most one") }
    }

    /// The key type the key form addresses: `int64` with `--int64`, else `binary`.
    var keyType: ValueBoxKeyType { int64 ? .int64 : .binary }

    /// KEY as the user wrote it, with its form, for messages: `'abc'`, `hex 0a0b`, `int64 -5`.
    var keyDescription: String {
        if int64 { return "int64 \(key)" }
        if hex { return "hex \(key)" }
        return "'\(key)'"
    }

    /// The table descriptor and the key; a ``CommandFailure`` (exit 2) when either is bad input.
    func resolved() throws(CommandFailure) -> (table: ValueBoxTable, key: ValueBoxKey) {
        do throws(KeyProblem) {
            return (try tableDescriptor(), try parsedKey())
        } catch {
            switch error {
            case let .unparsable(message): throw CommandFailure(status: ExitStatus.badInput, message, place: db)
            case let .engine(engineError): throw CommandFailure(engineError, database: db)
            }
        }
    }

    /// The descriptor of TABLE with the key form's key type; `.reservedTableId` for a negative id.
    func tableDescriptor() throws(KeyProblem) -> ValueBoxTable {
        if table < 0 { throw .engine(.reservedTableId(id: table)) }
        return ValueBoxTable(id: table, keyType: keyType)
    }

    /// KEY in its form; `.keyTooLarge` for a binary key longer than the engine accepts.
    func parsedKey() throws(KeyProblem) -> ValueBoxKey {
        if int64 {
            var text = key
            let value = text.withUTF8 { DumpText.parseInt64(UnsafeRawBufferPointer($0)) }
            guard let value else {
                throw .unparsable("bad int64 key '\(key)': expected a signed decimal integer from \(Int64.min) to \(Int64.max)")
            }
            return ValueBoxKey(int64: value)
        }
        var bytes: [UInt8] = []
        if hex {
            var text = key
            let problem = text.withUTF8 { DumpText.decodeHex(UnsafeRawBufferPointer($0), into: &bytes) }
            if let problem { throw .unparsable("bad hex key: \(problem)") }
        } else {
            bytes = Array(key.utf8)
        }
        if bytes.count > ValueBox.maxKeySize {
            throw .engine(.keyTooLarge(length: bytes.count, limit: ValueBox.maxKeySize))
        }
        return ValueBoxKey(bytes)
    }
}

/// Why TABLE or KEY is not usable.
enum KeyProblem: Error {
    /// KEY does not parse in its form.
    case unparsable(String)
    /// The engine would refuse it (`.keyTooLarge`, `.reservedTableId`).
    case engine(BoxwoodError)
}
