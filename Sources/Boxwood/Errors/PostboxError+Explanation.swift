import BoxwoodStore
import Foundation

extension PostboxError {
    /// What is wrong and what can be done about it, as ``BoxwoodStore/BoxwoodError/explanation`` says it for
    /// the engine (a Postbox error concerns no particular file: `place` is nil).
    public var explanation: BoxwoodError.Explanation {
        switch self {
        case .transactionEnded:
            return .init(problem: "the transaction has ended; a Transaction must not be used outside its closure")
        case let .newerUserVersion(found, supported):
            return .init(problem: "Postbox schema version \(found) is newer than this build supports (version \(supported))",
                         recoverySuggestion: "open it with a newer version of the app")
        case let .noUpgradePath(from, to):
            return .init(problem: "Postbox schema version \(from) is not one this build reads (it supports version \(to))",
                         recoverySuggestion: "pass Postbox.open a PostboxUpgrade step that starts at version \(from)")
        case let .invalidUpgrade(from, to):
            return .init(problem: "the upgrade step from Postbox schema version \(from) ends at version \(to), not at a higher one",
                         recoverySuggestion: "make each PostboxUpgrade step end at a higher version than it starts from")
        case .closed:
            return .init(problem: "the Postbox is closed", recoverySuggestion: "open the database again")
        case .suspended:
            return .init(problem: "the Postbox is suspended (the app is in the background)", recoverySuggestion: "call resume() first")
        }
    }
}

/// Postbox's errors as `LocalizedError`, from ``PostboxError/explanation``.
extension PostboxError: LocalizedError {
    /// What is wrong, as a sentence: "The Postbox is closed."
    public var errorDescription: String? { explanation.problemSentence }

    /// What the user or the app can do, as a sentence; nil for a programming error.
    public var recoverySuggestion: String? { explanation.recoverySuggestionSentence }
}
