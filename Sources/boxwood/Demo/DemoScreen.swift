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
        let chatList = PostboxViewKey.chatList(groupId: .root, count: 12)
        let unread = PostboxViewKey.totalUnreadState(groupId: .root)
        let stream = postbox.combinedView(keys: [chatList, unread, .postboxState])
        let postbox = postbox
        let output = output
        task = Task {
            var updates = 0
            for await combined in stream {
                updates += 1
                guard let list = combined.views[chatList] as? ChatListView else { continue }
                let total = (combined.views[unread] as? TotalUnreadView)?.state.messageCount ?? 0
                let pts = ((combined.views[.postboxState] as? PostboxStateView)?.state as? SyncAccountState)?.pts
                guard let rows = try? await ChatListScreen.rows(list, postbox: postbox) else { continue }
                output.chatList(ChatListScreen.render(rows, width: 100),
                                summary: "\(total) unread, pts \(pts.map(String.init) ?? "–"), view update #\(updates)")
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    func stop() { task?.cancel() }
}
