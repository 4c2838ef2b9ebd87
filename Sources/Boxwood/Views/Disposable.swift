import Foundation

/// Something that can be stopped, such as a live-view subscription (SwiftSignalKit's `Disposable`).
/// Disposing twice does nothing more.
public protocol Disposable: AnyObject, Sendable {
    func dispose()
}

/// A ``Disposable`` that runs an action on its first ``dispose()`` (SwiftSignalKit's `ActionDisposable`).
public final class ActionDisposable: Disposable, @unchecked Sendable {
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?

    public init(action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    /// Whether ``dispose()`` was called.
    public var isDisposed: Bool { lock.withLock { action == nil } }

    public func dispose() {
        let pending = lock.withLock { () -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        pending?()
    }
}
