import BoxwoodStore
import Foundation

/// The engine's errors as `LocalizedError`, from ``BoxwoodStore/BoxwoodError/explanation``: `localizedDescription`
/// says what is wrong and where, `recoverySuggestion` what to do.
///
/// The conformance lives here rather than in `BoxwoodStore` because the engine does not import Foundation (it
/// is the layer that must build anywhere the standard library does). It is declared outside the type's module
/// but inside its package, so Swift does not count it as retroactive (no `@retroactive`): an app that imports
/// `BoxwoodStore` alone gets `BoxwoodError.explanation` and `description`, and once `Boxwood` is linked every
/// `BoxwoodError` is a `LocalizedError` (an app must not declare the conformance a second time).
extension BoxwoodError: LocalizedError {
    /// What is wrong and where, as a sentence: "Cannot write: the disk is full (errno 28) (/path/to/db/wal)."
    public var errorDescription: String? { explanation.problemSentence }

    /// What the user or the app can do, as a sentence; nil when there is nothing to do but report the error.
    public var recoverySuggestion: String? { explanation.recoverySuggestionSentence }
}
