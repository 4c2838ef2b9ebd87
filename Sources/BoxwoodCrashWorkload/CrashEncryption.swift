import BoxwoodStore

/// How the crash workload's database is encrypted: not at all, under one key, or rekeyed between two keys while
/// the child runs (so that kills land inside `rekey`). Passed to `boxwood-crash-child` as its last argument.
public enum CrashEncryption: String, Sendable, CaseIterable {
    case plain
    case encrypted
    case rekeying

    /// The two keys the crash tests use (not secret: test keys). Computed, not stored: a global holding `Data`
    /// would be reported as a leak by LeakSanitizer, which does not follow Swift's tagged references.
    public static var first: ValueBoxEncryptionParameters { parameters(1) }
    public static var second: ValueBoxEncryptionParameters { parameters(2) }

    private static func parameters(_ seed: UInt8) -> ValueBoxEncryptionParameters {
        ValueBoxEncryptionParameters(
            forceEncryptionIfNoSet: false,
            key: ValueBoxEncryptionParameters.Key(bytes: (0..<32).map { UInt8($0) &* 31 &+ seed })!,
            salt: ValueBoxEncryptionParameters.Salt(bytes: (0..<16).map { UInt8($0) &* 17 &+ seed })!)
    }

    /// The keys a database in this mode may be under, in the order to try them.
    public var candidateKeys: [ValueBoxEncryptionParameters?] {
        switch self {
        case .plain: return [nil]
        case .encrypted: return [CrashEncryption.first]
        case .rekeying: return [CrashEncryption.first, CrashEncryption.second]
        }
    }

    /// Opens the database at `path` with `options` and the first candidate key that opens it. A kill during a
    /// rekey leaves the database under either key, complete: exactly one of them opens it.
    public func open(_ path: String, options: ValueBoxOptions) throws(BoxwoodError) -> ValueBox {
        var lastError: BoxwoodError? = nil
        for key in candidateKeys {
            var o = options
            o.encryption = key
            do {
                return try ValueBox(path: path, options: o)
            } catch .wrongKey(let file) {
                lastError = .wrongKey(path: file)
            }
        }
        throw lastError ?? .wrongKey(path: path)
    }

    /// After transaction `n` (one the workload checkpoints after), the key to rekey to: the other candidate. Nil
    /// when this mode does not rekey.
    public func rekeyTarget(current: ValueBox) -> ValueBoxEncryptionParameters? {
        guard self == .rekeying else { return nil }
        return current.encryption == CrashEncryption.first ? CrashEncryption.second : CrashEncryption.first
    }
}
