import Boxwood
import BoxwoodStore
import SystemPackage

/// The tool's message for an engine error: the library's explanation (``BoxwoodError/explanation``), with the
/// advice that only makes sense at a shell in place of the library's — `boxwood check`/`recover`, a newer
/// `boxwood`, `--lock-timeout`, the read-only commands — and the place (`place`; nil for errors that name none).
func describe(_ error: BoxwoodError) -> (what: String, place: String?) {
    let explanation = error.explanation
    switch error {
    case .lockTimeout:
        return (explanation.problem + ". It is safe to retry, or raise --lock-timeout", explanation.place)
    case let .unsupportedFormatVersion(_, found, supported) where found > supported:
        return (explanation.problem + "; use a newer boxwood", explanation.place)
    case let .io(_, _, code) where [.permissionDenied, .notPermitted, .readOnlyFileSystem].contains(Errno(rawValue: code)):
        return (explanation.problem + "; read-only commands (stat, dump, check, search, history) still work", explanation.place)
    case .checksumMismatch, .corrupted:
        return (explanation.problem + " (run `boxwood check` for a full report, `boxwood recover` to salvage)", explanation.place)
    case .symbolicLink:
        return (explanation.problem + " (" + (explanation.recoverySuggestion ?? "") + ")", explanation.place)
    default:
        return (explanation.what, explanation.place)
    }
}

/// A one-line explanation of an error of the layers above the engine, met on a sync database: Postbox errors and
/// decoding errors.
func explainNonEngine(_ error: any Error) -> String {
    switch error {
    case let error as PostboxError:
        switch error {
        case .newerUserVersion:
            return error.explanation.problem + "; use a newer boxwood"
        case .noUpgradePath:
            return error.explanation.problem
        default:
            return "\(error)"
        }
    case let error as PostboxDecodingError:
        return "stored data could not be decoded (\(error)); it was written by a newer version or is not a sync database"
    default:
        return "\(error)"
    }
}
