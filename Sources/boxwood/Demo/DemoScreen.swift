import Boxwood
import BoxwoodSync

/// Follows the chat-list and total-unread live views of the demo database (opened by this process while the
/// client process writes it) and hands each new state to the output, at most every 200 ms.
final class DemoScreen: @unchecked Sendable {
    private let postbox: Postbox
    private let output: DemoOutput
    private var task: Task<Void, Never>?

    init(postbox: Postbox, output: DemoOutput) {
        self.postbox = postbox
        self.output = output
    }

    func start() {
        let chatList = PostboxViewQuery.chatList(count: 12)
        let unread = PostboxViewQuery.totalUnreadState()
        let state = PostboxViewQuery.postboxState
        let stream = postbox.combinedView(keys: [chatList.key, unread.key, state.key])
        let output = output
        task = Task {
            var updates = 0
            var reported = Set<PostboxViewKey>()
            do {
                for try await combined in stream {
                    updates += 1
                    for (key, failure) in combined.failures where reported.insert(key).inserted { output.log("\(failure)") }
                    guard let list = combined[chatList] else { continue }
                    let total = combined[unread]?.state.messageCount ?? 0
                    let pts = (combined[state]?.state as? SyncAccountState)?.pts
                    let rows = ChatListScreen.rows(list)
                    output.chatList(ChatListScreen.render(rows, width: 100),
                                    summary: "\(total) unread, pts \(pts.map(String.init) ?? "–"), view update #\(updates)")
                    try await Task.sleep(for: .milliseconds(200))
                }
            } catch is CancellationError {
                // `stop()`.
            } catch {
                output.log("the live views stopped: \(error)")
            }
        }
    }

    func stop() { task?.cancel() }
}
