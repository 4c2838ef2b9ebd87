import Foundation
import Testing
@testable import Boxwood

/// A secret chat: stands for a user (its associated peer), whose notification settings apply to it.
struct TestSecretChat: Peer, Equatable {
    static let postboxTypeName = "TestSecretChat"

    let id: PeerId
    let userId: PeerId
    var associatedPeerId: PeerId? { userId }
    var notificationSettingsPeerId: PeerId? { userId }
    var indexName: PeerIndexNameRepresentation { .title(title: "", addressNames: []) }

    init(id: PeerId, userId: PeerId) {
        self.id = id
        self.userId = userId
    }

    init(decoder: PostboxDecoder) throws(PostboxDecodingError) {
        id = PeerId(try decoder.decodeInt64(forKey: "i"))
        userId = PeerId(try decoder.decodeInt64(forKey: "u"))
    }

    func encode(_ encoder: PostboxEncoder) {
        encoder.encodeInt64(id.toInt64(), forKey: "i")
        encoder.encodeInt64(userId.toInt64(), forKey: "u")
    }
}

func registerViewTestTypes() throws {
    try registerTestTypes()
    try registerTableTestTypes()
    try declareEncodable(TestSecretChat.self)
}

/// Collects every snapshot a callback-form subscription delivers.
final class ViewRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var views: [CombinedView] = []
    private var failures: [any Error] = []
    private var onPostboxQueue = false

    func record(_ view: CombinedView) {
        let onQueue = DispatchQueue.getSpecific(key: Postbox.queueKey) != nil
        lock.withLock {
            views.append(view)
            if onQueue { onPostboxQueue = true }
        }
    }

    /// Records an error the subscription's `onError` got.
    func recordError(_ error: any Error) { lock.withLock { failures.append(error) } }

    var count: Int { lock.withLock { views.count } }
    /// The errors delivered to `onError`, in order.
    var errors: [any Error] { lock.withLock { failures } }
    var last: CombinedView? { lock.withLock { views.last } }
    /// Whether any snapshot was delivered on the Postbox queue.
    var sawPostboxQueue: Bool { lock.withLock { onPostboxQueue } }

    /// Waits (up to 10 s) until `count` snapshots arrived; returns them all.
    func waitFor(count: Int) async throws -> [CombinedView] {
        for _ in 0..<2_000 {
            let current = lock.withLock { views }
            if current.count >= count { return current }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("waited for \(count) snapshots, have \(self.count)")
        return lock.withLock { views }
    }
}

/// One transaction of a selectivity check and what the view must show after it (nil: the transaction must
/// not make the view emit).
struct ViewStep: Sendable {
    let transaction: @Sendable (Transaction) throws -> Void
    let expect: (@Sendable (any PostboxView) -> Bool)?

    static func irrelevant(_ transaction: @escaping @Sendable (Transaction) throws -> Void) -> ViewStep {
        ViewStep(transaction: transaction, expect: nil)
    }

    static func relevant(_ transaction: @escaping @Sendable (Transaction) throws -> Void, expect: @escaping @Sendable (any PostboxView) -> Bool) -> ViewStep {
        ViewStep(transaction: transaction, expect: expect)
    }
}

/// Subscribes to `key` with the callback form, checks the first snapshot with `initial`, then runs the steps:
/// every relevant step must deliver exactly one new snapshot that satisfies its check, every irrelevant one
/// none (checked when the next relevant step's snapshot arrives: deliveries are in order). Ends with a relevant
/// step. Disposes and checks that the registration is gone.
func expectSelectiveView(_ postbox: Postbox, _ key: PostboxViewKey, initial: (any PostboxView) -> Bool, steps: [ViewStep],
                         sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let baseline = postbox.liveViewCount
    let recorder = ViewRecorder()
    let disposable = postbox.combinedView(keys: [key], onNext: { recorder.record($0) }, onError: { recorder.recordError($0) })
    var expected = 1
    let first = try await recorder.waitFor(count: 1)
    #expect(first.first?.views[key].map(initial) == true, "initial snapshot of \(key)", sourceLocation: sourceLocation)
    for (number, step) in steps.enumerated() {
        try await postbox.transaction(step.transaction)
        guard let expect = step.expect else { continue }
        expected += 1
        let views = try await recorder.waitFor(count: expected)
        // Let a spurious extra delivery (from an irrelevant step) show.
        try await Task.sleep(for: .milliseconds(20))
        #expect(recorder.count == expected, "\(key): step \(number) — \(recorder.count) snapshots, expected \(expected)", sourceLocation: sourceLocation)
        #expect(views.last?.views[key].map(expect) == true, "\(key): step \(number) shows \(fingerprint(views.last?.views[key]))",
                sourceLocation: sourceLocation)
    }
    #expect(!recorder.sawPostboxQueue, sourceLocation: sourceLocation)
    disposable.dispose()
    for _ in 0..<400 where postbox.liveViewCount != baseline { try await Task.sleep(for: .milliseconds(5)) }
    #expect(postbox.liveViewCount == baseline, sourceLocation: sourceLocation)
}

// MARK: Fingerprints of the peer, contact, message, list and unsent views

func describe(_ value: Any?) -> String { value.map { String(describing: $0) } ?? "nil" }

func describe<Value>(_ dictionary: [PeerId: Value]) -> String {
    dictionary.sorted { $0.key < $1.key }.map { "\($0.key)=\(String(describing: $0.value))" }.joined(separator: ",")
}

/// A message with the peers and messages it resolves (a change of either is a change of what a view shows).
func describe(_ message: Message) -> String {
    "\(message.id)@\(message.timestamp) s\(message.stableId) v\(message.stableVersion) f\(message.flags.rawValue) \(message.text)"
        + " peers[\(describe(message.peers))] associated[\(describe(message.associatedMessages))]"
}

func describe(_ messages: [MessageId: Message]) -> String {
    messages.sorted { $0.key < $1.key }.map { describe($0.value) }.joined(separator: ",")
}

/// A comparable rendering of the views this part added (nil for other kinds).
func peerViewsFingerprint(_ view: (any PostboxView)?) -> String? {
    switch view {
    case let view as PeerView:
        return "peers[\(describe(view.peers))] presences[\(describe(view.peerPresences))] cached \(describe(view.cachedData)) "
            + "settings \(describe(view.notificationSettings)) contact \(view.peerIsContact)/\(view.contactPeerId) "
            + "messages[\(describe(view.messages))] group \(describe(view.groupId))"
    case let view as PeerChatStateView: return describe(view.chatState?.data)
    case let view as CachedPeerDataView: return describe(view.cachedPeerData)
    case let view as PeerPresencesView: return describe(view.presences)
    case let view as PeerNotificationSettingsView: return describe(view.notificationSettings)
    case let view as ContactPeersView:
        return "\(view.peerIds.sorted()) peers[\(describe(view.peers))] presences[\(describe(view.presences))]"
    case let view as IsContactView: return "\(view.isContact)"
    case let view as MessagesView: return describe(view.messages)
    case let view as OrderedItemListView: return view.items.map { "\($0.id.makeArray())=\($0.contents)" }.joined(separator: ",")
    case let view as UnsentMessagesView: return "\(view.indices.sorted())"
    default: return nil
    }
}
