import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a database read-only for the inspecting subcommands (it never waits for, or blocks, a writer); an error
/// is a ``CommandFailure``. Notes a writer that crashed mid-write first.
func openReadOnly(_ path: String, encryption: EncryptionOptions) throws(CommandFailure) -> ValueBox {
    noteIfLastWriterCrashed(path)
    var options = ValueBoxOptions(readOnly: true)
    options.encryption = try encryption.parameters()
    do {
        return try ValueBox(path: path, options: options)
    } catch {
        throw CommandFailure(error, database: path)
    }
}

/// Opens (creating when missing) a database for writing, waiting up to `lockTimeout` seconds for another
/// writer; an error is a ``CommandFailure``. `options.encryption` comes from the command's `--key-file`.
func openWritable(_ path: String, options: ValueBoxOptions) throws(CommandFailure) -> ValueBox {
    noteIfLastWriterCrashed(path, recoversNow: true)
    noteIfWriterLockHeld(path, timeout: options.lockTimeout)
    do {
        return try ValueBox(path: path, options: options)
    } catch {
        throw CommandFailure(error, database: path)
    }
}

/// Fails unless `path` is a directory holding a data file, without creating anything: for writer commands that
/// must not turn a mistyped path into a new database. A missing path is "not found" (exit 1); something that is not
/// a database is bad input (exit 2).
func requireExistingDatabase(_ path: String) throws(CommandFailure) {
    var info = stat()
    let reason: String
    if stat(path, &info) != 0 {
        reason = "no such directory"
    } else if info.st_mode & S_IFMT != S_IFDIR {
        reason = "not a directory"
    } else if stat(path + "/data", &info) != 0 {
        reason = "no data file"
    } else {
        return
    }
    throw CommandFailure(BoxwoodError.notABoxwoodDatabase(path: path, reason: reason))
}
