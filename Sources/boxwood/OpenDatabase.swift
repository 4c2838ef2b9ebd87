import ArgumentParser
import BoxwoodStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a database read-only for the inspecting subcommands (it never waits for, or blocks, a writer),
/// turning errors into one message on stderr and exit code 1 (or the code `exitStatus` gives for the error).
/// Notes a writer that crashed mid-write first.
func openReadOnly(_ path: String, exitStatus: (BoxwoodError) -> Int32 = { _ in ExitStatus.failure }) throws -> ValueBox {
    noteIfLastWriterCrashed(path)
    do {
        return try ValueBox(path: path, options: ValueBoxOptions(readOnly: true))
    } catch {
        printError(explain(error))
        throw ExitCode(exitStatus(error))
    }
}

/// Opens (creating when missing) a database for writing, waiting up to `lockTimeout` seconds for another
/// writer; errors become one message on stderr and exit code 1 (or the code `exitStatus` gives for the error).
func openWritable(_ path: String, options: ValueBoxOptions,
                  exitStatus: (BoxwoodError) -> Int32 = { _ in ExitStatus.failure }) throws -> ValueBox {
    noteIfLastWriterCrashed(path, recoversNow: true)
    noteIfWriterLockHeld(path, timeout: options.lockTimeout)
    do {
        return try ValueBox(path: path, options: options)
    } catch {
        printError(explain(error))
        throw ExitCode(exitStatus(error))
    }
}

/// Runs an engine call, turning a `BoxwoodError` into a message and exit code 1.
func engine<T>(_ body: () throws(BoxwoodError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        printError(explain(error))
        throw ExitCode(ExitStatus.failure)
    }
}

/// Runs an engine call like ``engine(_:)``, but exits with the code ``ExitStatus/for(_:)`` gives for the error
/// (2 bad input, 3 damaged, 4 locked, else 1) instead of always 1.
func engineMapped<T>(_ body: () throws(BoxwoodError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        printError(explain(error))
        throw ExitCode(ExitStatus.for(error))
    }
}

/// Fails (message and exit code 1) unless `path` is a directory holding a data file, without creating
/// anything: for writer commands that must not turn a mistyped path into a new database.
func requireExistingDatabase(_ path: String) throws {
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
    printError(explain(BoxwoodError.notABoxwoodDatabase(path: path, reason: reason)))
    throw ExitCode(ExitStatus.failure)
}
