import Boxwood
import Logging

/// The sync layer's logger, label `org.boxwood.sync` (swift-log): for errors the layer handles without rethrowing
/// them — a failed request it retries, a storage failure it reports on ``AccountStateManager/events`` and tries
/// again later — so an app sees them in its log even when it does not watch the events.
///
/// The library never bootstraps the logging system: an app routes these messages with `LoggingSystem.bootstrap`.
/// A logger is made at each use, so a bootstrap that comes after the client started still applies.
enum SyncLog {
    /// The label of the layer's loggers.
    static let label = "org.boxwood.sync"

    /// Makes the layer's loggers (tests install a capturing handler through it).
    static let factory = LoggerFactory()

    /// A logger for the layer, made now.
    static var logger: Logger { factory.make(label) }
}
