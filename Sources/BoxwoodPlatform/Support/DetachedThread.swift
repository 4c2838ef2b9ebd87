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
        #if os(Linux)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
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
