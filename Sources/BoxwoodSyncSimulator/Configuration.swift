import BoxwoodSync

/// How a ``SimulatedServer`` is built: its seed, the size of its world, its difference limits and its faults.
public struct SimulatedServerConfiguration: Hashable, Sendable {
    /// Seeds every random choice of the server (world, traffic, faults); the same seed and the same calls give the
    /// same results.
    public var seed: UInt64
    /// Users other than the account (at least 1: groups and secret chats need members).
    public var users: Int
    /// Basic groups (their messages share the account's message ids and pts).
    public var groups: Int
    /// Channels (each with its own message ids and pts).
    public var channels: Int
    /// Secret chats (their incoming messages arrive through qts).
    public var secretChats: Int
    /// How many messages each chat has before the simulation starts (chosen per chat in this range).
    public var initialHistory: ClosedRange<Int>
    /// Matching log entries per getDifference answer; when more remain the answer is a `slice`.
    public var differenceSliceSize: Int
    /// getChannelDifference answers `tooLong` when the channel's pts is ahead of the client's by more than this.
    public var channelTooLongThreshold: Int32
    /// The network faults in effect at the start (change them later with ``SimulatedServer/setFaults(_:)``).
    public var faults: SimulatedFaults
    /// How many channels (the last ones) the account may read but not post in: a send there is refused for good
    /// with `CHAT_WRITE_FORBIDDEN` (0 by default).
    public var readOnlyChannels = 0
    /// How many channels (the first ones) the server never pushes updates of and never announces in getDifference
    /// (`channelTooLong`), as Telegram does for a channel the account previews without having joined it: the client
    /// learns of their posts only by asking (getChannelDifference, while it keeps the channel polled). 0 by default.
    public var unpushedChannels = 0
    /// How many chats are pinned: the first ones of the groups, then the channels, in that order (0 by default).
    /// They head the first page of `getDialogs`.
    public var pinnedChats = 0

    /// A configuration; the defaults describe a small account: 12 users, 4 groups, 4 channels, 2 secret chats.
    public init(seed: UInt64 = 1, users: Int = 12, groups: Int = 4, channels: Int = 4, secretChats: Int = 2,
                initialHistory: ClosedRange<Int> = 20...200, differenceSliceSize: Int = 100,
                channelTooLongThreshold: Int32 = 200, faults: SimulatedFaults = .none) {
        precondition(users >= 1, "the simulated account needs at least one other user")
        precondition(groups >= 0 && channels >= 0 && secretChats >= 0, "chat counts must not be negative")
        precondition(initialHistory.lowerBound >= 0, "history sizes must not be negative")
        precondition(differenceSliceSize >= 1, "a difference slice holds at least one entry")
        precondition(channelTooLongThreshold >= 0, "the channel threshold must not be negative")
        self.seed = seed
        self.users = users
        self.groups = groups
        self.channels = channels
        self.secretChats = secretChats
        self.initialHistory = initialHistory
        self.differenceSliceSize = differenceSliceSize
        self.channelTooLongThreshold = channelTooLongThreshold
        self.faults = faults
    }
}
