/// A value of the preferences table (app or account settings under an app-chosen key), implemented by the app
/// and stored through the coder. A `Codable` setting can be stored as a ``CodableEntry`` instead.
public protocol PreferencesEntry: PostboxCoding, Sendable {
    /// Whether `other` is the same entry.
    func isEqual(to other: any PreferencesEntry) -> Bool
}

extension PreferencesEntry where Self: Equatable {
    public func isEqual(to other: any PreferencesEntry) -> Bool { (other as? Self) == self }
}

extension CodableEntry: PreferencesEntry {}
