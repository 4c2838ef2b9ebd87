import Logging

/// The Postbox layer's logger, label `org.boxwood.postbox` (swift-log): for errors the layer handles without
/// rethrowing them — the caller never sees those, so the log is where they show.
///
/// The library never bootstraps the logging system: an app routes these messages with `LoggingSystem.bootstrap`
/// (to `os_log`, a file, a server…); without it swift-log prints them to stderr. A logger is made at each use,
/// not once, so a bootstrap that comes after the database opened still applies.
///
/// ```swift
/// PostboxLog.logger.error("closing the value box failed", metadata: ["path": "\(path)", "error": "\(error)"])
/// ```
enum PostboxLog {
    /// The label of the layer's loggers.
    static let label = "org.boxwood.postbox"

    /// Makes the layer's loggers (tests install a capturing handler through it).
    static let factory = LoggerFactory()

    /// A logger for the layer, made now.
    static var logger: Logger { factory.make(label) }
}
