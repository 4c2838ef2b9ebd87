import ArgumentParser
import Boxwood
import BoxwoodStore
import BoxwoodSync
import Dispatch

/// A sync database (a Postbox created by the sync layer) opened read-only for `search` and `history`: it
/// never waits for, or blocks, a writer, and sees the newest commit of any process at each read.
final class SyncDatabase {
    let path: String
    private let postbox: Postbox

    private init(path: String, postbox: Postbox) {
        self.path = path
        self.postbox = postbox
    }

    /// Opens the database at `path` with the sync layer's seed configuration and types; an error is a
    /// ``CommandFailure``.
    static func open(_ path: String, encryption: ValueBoxEncryptionParameters?) throws -> SyncDatabase {
        noteIfLastWriterCrashed(path)
        do {
            try SyncClient.registerTypes()
            let postbox = try runBlocking {
                var options = ValueBoxOptions(readOnly: true)
                options.encryption = encryption
                return try await SyncClient.openPostbox(path: path, options: options)
            }
            return SyncDatabase(path: path, postbox: postbox)
        } catch BoxwoodError.readOnly(_) {
            // Opening wrote nothing but would have had to: the database has no Postbox metadata yet.
            throw CommandFailure(status: ExitStatus.badInput, "a Boxwood database but not a sync database (it holds no Postbox data)", place: path)
        } catch {
            throw CommandFailure(anyError: error, database: path)
        }
    }

    /// Runs `body` in a (read) transaction; an error is a ``CommandFailure``.
    func read<T: Sendable>(_ body: @escaping @Sendable (Transaction) throws -> T) throws -> T {
        do {
            let postbox = self.postbox
            return try runBlocking { try await postbox.transaction(body) }
        } catch {
            throw CommandFailure(anyError: error, database: path)
        }
    }

    /// Closes the database (a read-only close writes nothing).
    func close() {
        let postbox = self.postbox
        _ = try? runBlocking { try await postbox.close() }
    }
}

/// Runs async work to completion from the synchronous command code and returns its result. The work runs on
/// the concurrency pool (Postbox transactions on the Postbox queue), so blocking this thread cannot deadlock.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// The result slot of ``runBlocking(_:)``: written once before the semaphore is signalled, read after it.
private final class BlockingOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
