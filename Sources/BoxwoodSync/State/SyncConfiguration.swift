import Boxwood

/// Timing and limits of the state manager (defaults follow Telegram and the lessons in docs/sync.md).
public struct SyncConfiguration: Sendable {
    /// How long updates behind a gap wait for the gap to fill before the difference is polled.
    public var gapWait: Duration = .milliseconds(500)
    /// How long pushed updates are collected before they are processed together.
    public var collectWindow: Duration = .milliseconds(20)
    /// `pts_total_limit` of getDifference (beyond it the server answers `tooLong`).
    public var ptsTotalLimit: Int32 = 1000
    /// Messages per getChannelDifference answer.
    public var channelDifferenceLimit: Int32 = 20
    /// Channels fetched at once.
    public var maxConcurrentChannelFetches = 4
    /// First retry delay of a failed request; doubles up to ``retryMaxDelay``.
    public var retryInitialDelay: Duration = .seconds(1)
    public var retryMaxDelay: Duration = .seconds(30)
    /// The longest a server's `floodWait` is obeyed before the request is retried. The wait comes from the
    /// wire: NaN, negative and infinite values are not waited for (the retry backs off as after any failure),
    /// longer ones are cut to this, so that no answer can make the queue sleep for ever (or trap converting it).
    public var floodWaitLimit: Duration = .seconds(3600)
    /// Gap polls in a row after which updates are still held behind a gap that no difference filled: they claim
    /// counters the server's own differences do not reach (a hostile or broken server), so they are dropped and
    /// the difference polled once more instead of waiting and polling for ever. Dropping loses nothing: the
    /// cursor never moves past an update that was not applied, so the next difference brings what it carried.
    public var gapPollLimit = 3
    /// Dialogs per getDialogs page when the chats are rebuilt from the dialog list (Telegram: 100).
    public var dialogsPageSize: Int32 = 100
    /// Pages of the dialog list a rebuild fetches at once (at least 1; default 1). The rest of the list becomes a
    /// chat-list hole, fetched a page at a time when a chat-list view shows it (as Telegram loads the first 100 chats
    /// and the rest while the list scrolls), and a chat below the hole that gets a message is discovered and its
    /// dialog taken (``SyncChatListHoles``). `Int.max` fetches the whole list at every rebuild (page by page, in
    /// bounded memory): for a client that wants every chat stored before its first view, at the price of the first
    /// sync's time on a large account.
    public var dialogPagesAtReset = 1
    /// Messages per history request when filling a hole.
    public var holeFillPageSize: Int32 = 50
    /// How long a filled hole entry is not fetched again.
    public var holeCooldown: Duration = .seconds(20)
    /// Delay before reconnecting the push channel after it dropped.
    public var reconnectDelay: Duration = .milliseconds(200)
    /// Poll the difference after this long without updates (Telegram: 15 minutes).
    public var idlePollInterval: Duration = .seconds(15 * 60)
    /// How often a channel kept polled (``AccountStateManager/pollChannel(_:)``) is asked for its difference
    /// (Telegram polls an open channel whose updates are not pushed about every 30 seconds, the `timeout` its
    /// server gives).
    public var channelPollInterval: Duration = .seconds(30)
    /// At most this many channels are polled at once: the most recently opened ones (Telegram keeps polling only the
    /// channels on screen). The others wait until one of them is closed.
    public var maxPolledChannels = 5
    /// The size of an upload's parts (Telegram: 512 KiB for big files; a multiple of 1 KiB, at most
    /// ``ApiUploadLimits/maxPartSize``). A kill loses at most the part in flight.
    public var uploadPartSize: Int32 = 512 * 1024

    public init() {}

    /// Short waits for tests and the demo: the same logic, faster.
    public static var fast: SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.gapWait = .milliseconds(30)
        configuration.collectWindow = .milliseconds(2)
        configuration.retryInitialDelay = .milliseconds(2)
        configuration.retryMaxDelay = .milliseconds(40)
        configuration.holeCooldown = .milliseconds(50)
        configuration.reconnectDelay = .milliseconds(5)
        configuration.channelPollInterval = .milliseconds(100)
        configuration.uploadPartSize = 1024
        return configuration
    }
}

/// What the state manager has done since it started.
public struct SyncStatistics: Sendable, Hashable, Codable {
    /// Updates applied (pushed or fetched).
    public var updatesApplied = 0
    /// Updates skipped because they were applied already.
    public var duplicatesSkipped = 0
    /// Gaps seen in pushed updates.
    public var gapsDetected = 0
    /// getDifference calls (slices included).
    public var differenceRequests = 0
    /// Difference answers that reset the cursor (`tooLong`).
    public var differenceTooLong = 0
    /// getChannelDifference calls.
    public var channelDifferenceRequests = 0
    /// Rounds of polling the channels kept polled (``AccountStateManager/pollChannel(_:)``).
    public var channelPollRounds = 0
    /// Channel difference answers that reset a channel (`tooLong`).
    public var channelTooLong = 0
    /// Pages of the dialog list fetched (getDialogs calls answered).
    public var dialogPages = 0
    /// Holes (pages) filled from getHistory.
    public var holesFilled = 0
    /// Messages stored by hole fills.
    public var messagesFetchedForHoles = 0
    /// Pages of unread mentions fetched to fill chats' mention spaces (``SyncMentions``).
    public var mentionPagesFetched = 0
    /// Committed batches.
    public var commits = 0
    /// Batches discarded because the stored cursor moved.
    public var discardedBatches = 0
    /// Failed requests retried.
    public var retries = 0
    /// Pushed updates dropped because their counters are impossible (see ``ImplausibleCounter``).
    public var implausibleUpdates = 0
    /// Answers dropped because they are impossible: a difference slice or a non-final channel difference that
    /// does not move the cursor, a page of the dialog list whose next offset does not move down the list (asking
    /// again would get the same answer for ever).
    public var implausibleAnswers = 0
    /// Held-back update groups dropped after ``SyncConfiguration/gapPollLimit`` gap polls did not release them.
    public var heldUpdatesDropped = 0

    public init() {}
}
