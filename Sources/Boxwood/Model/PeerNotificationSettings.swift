/// A peer's notification settings, implemented by the app and stored through the coder.
public protocol PeerNotificationSettings: PostboxCoding, Sendable {
    /// Whether the peer's unread messages are left out of the total unread counter (for example when muted).
    /// `defaultValue` is the answer for settings that defer to the global default.
    func isRemovedFromTotalUnreadCount(default defaultValue: Bool) -> Bool
    /// Whether `other` is the same settings.
    func isEqual(to other: any PeerNotificationSettings) -> Bool
}

extension PeerNotificationSettings where Self: Equatable {
    public func isEqual(to other: any PeerNotificationSettings) -> Bool { (other as? Self) == self }
}
