import Foundation
import Logging

/// How a Boxwood layer makes its loggers (``PostboxLog``, and the sync layer's): `Logger(label:)` — whatever
/// handler the app bootstrapped, at the moment of logging — or a handler a test installs for the time of a test
/// (``withHandler(_:_:)``), to see what the layer logs without bootstrapping the logging system of the whole test
/// process. Shared by the package's modules, not public.
package final class LoggerFactory: @unchecked Sendable {
    private let lock = NSLock()
    private var handler: (@Sendable (String) -> any LogHandler)?

    package init() {}

    /// A logger labelled `label`, made now.
    package func make(_ label: String) -> Logger {
        let handler = lock.withLock { self.handler }
        guard let handler else { return Logger(label: label) }
        return Logger(label: label, factory: handler)
    }

    /// Runs `body` with the loggers made by `handler`, then restores the previous way. Meant for tests: every
    /// logger this factory makes meanwhile, in any task, uses `handler`.
    package func withHandler<T>(_ handler: @escaping @Sendable (String) -> any LogHandler,
                                _ body: () async throws -> T) async rethrows -> T {
        let previous = lock.withLock { () -> (@Sendable (String) -> any LogHandler)? in
            defer { self.handler = handler }
            return self.handler
        }
        defer { lock.withLock { self.handler = previous } }
        return try await body()
    }
}
