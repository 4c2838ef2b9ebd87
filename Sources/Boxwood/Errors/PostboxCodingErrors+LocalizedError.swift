import Foundation

/// A stored value that could not be decoded, as `LocalizedError`: what was wrong with the bytes, and what it
/// usually means for the app.
extension PostboxDecodingError: LocalizedError {
    /// "Stored data could not be decoded: <the description>."
    public var errorDescription: String? { "Stored data could not be decoded: \(description)." }

    /// Why bytes fail to decode.
    public var failureReason: String? {
        switch self {
        case .unknownType:
            return "The value holds an object whose type this build has not registered."
        case .codable:
            return "A Decodable type rejected the stored value."
        default:
            return "The value was written by a newer version of the app, or the database is damaged."
        }
    }

    /// What the app can do.
    public var recoverySuggestion: String? {
        switch self {
        case .unknownType:
            return "Register the type with declareEncodable before opening the database."
        default:
            return "Open the database with the version of the app that wrote it, or check it for damage."
        }
    }
}

/// A value that could not be encoded, as `LocalizedError`.
extension PostboxEncodingError: LocalizedError {
    /// "A value could not be encoded: <the description>."
    public var errorDescription: String? { "A value could not be encoded: \(description)." }

    /// Why.
    public var failureReason: String? { "Its Encodable implementation threw an error." }
}
