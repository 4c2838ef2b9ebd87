import CBoxwoodPlatform
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached POSIX thread for work that blocks in the kernel (a wait on a shared word), which must not occupy a
/// thread of Swift's cooperative pool.
public enum DetachedThread {
    /// Starts `body` on a new detached thread named `name` (at most 15 bytes are kept on Linux).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        let thread = try PlatformThread.create(name: name, body)
        #if os(Linux)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
    }
}

/// A joinable POSIX thread: one piece of work that its starter waits for with ``join()`` (a sleep in the kernel,
/// `pthread_join`), e.g. a checkpoint written in the background. The thread exists only while `body` runs.
public final class JoinableThread: @unchecked Sendable {
    private let thread: PlatformThread.Handle
    private init(_ thread: PlatformThread.Handle) { self.thread = thread }
    /// Set by the first `join` (the starter is the only caller).
    private var joined = false

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept on Linux).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) -> JoinableThread {
        JoinableThread(try PlatformThread.create(name: name, body))
    }

    /// Waits until the thread's body has returned. Later calls return at once.
    public func join() {
        if joined { return }
        joined = true
        #if os(Linux)
        _ = pthread_join(thread, nil)
        #else
        if let thread { _ = pthread_join(thread, nil) }
        #endif
    }

    deinit {
        // A thread nobody joined must not stay a zombie: detach it (it still runs to its end).
        if !joined {
            #if os(Linux)
            pthread_detach(thread)
            #else
            if let thread { pthread_detach(thread) }
            #endif
        }
    }
}

/// `pthread_create` for both kinds of thread: starts `body` on a new (joinable) thread named `name`.
private enum PlatformThread {
    #if os(Linux)
    typealias Handle = pthread_t
    #else
    typealias Handle = pthread_t?
    #endif

    static func create(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) -> Handle {
        let context = Unmanaged.passRetained(ThreadBody(name: name, body: body)).toOpaque()
        #if os(Linux)
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()  // `raw` is `context`, never nil
            return nil
        }, context)
        #else
        var thread: pthread_t? = nil
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        #endif
        guard status == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            throw Errno(rawValue: status)
        }
        return thread
    }
}

/// What a detached thread runs (carried through `pthread_create`'s context pointer).
private final class ThreadBody {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    func run() {
        #if os(Linux)
        _ = boxwood_name_this_thread(String(name.utf8.prefix(15)) ?? "boxwood")
        #elseif canImport(Darwin)
        _ = pthread_setname_np(name)
        #endif
        body()
    }
}
