import Boxwood

/// Hooks for the `sync-wire` fuzzer in `Fuzz/` (issue 22): runs the internal ``UpdateReducer`` on update groups
/// decoded from hostile input and reports what it did. Nothing here is used by the sync engine itself.
///
/// Import with `@_spi(Fuzzing) import BoxwoodSync`. Not a stable API.
@_spi(Fuzzing)
public enum ReducerFuzzing {
    /// What one `UpdateReducer.reduce` call did.
    public struct Outcome: Sendable {
        /// The cursor after the batch.
        public var state: SyncAccountState
        /// The channel cursors after the batch.
        public var channelPts: [PeerId: Int32]
        /// The groups held back behind a gap.
        public var heldBack: [UpdateGroup]
        /// Updates applied.
        public var applied: Int
        /// Updates skipped as already applied.
        public var duplicates: Int
        /// Updates dropped for impossible counters.
        public var implausible: Int
        /// Database mutations the batch would replay.
        public var mutations: Int
        /// The batch asks for a difference poll.
        public var reset: Bool
        /// Channels the batch asks to fetch.
        public var channelsToFetch: Set<PeerId>
    }

    /// Reduces `groups` against the cursor `state` and the stored channel cursors `channelPts`, as the state
    /// manager does with a batch of pushed updates.
    public static func reduce(_ groups: [UpdateGroup], state: SyncAccountState, channelPts: [PeerId: Int32],
                              realtime: Bool) -> Outcome {
        var mutable = SyncMutableState(initialState: state, state: state, storedAnswers: 0)
        for (peerId, pts) in channelPts { mutable.loadChannel(peerId, storedPts: pts) }
        let result = UpdateReducer.reduce(groups, into: &mutable, source: realtime ? .realtime : .catchUp)
        return Outcome(state: mutable.state, channelPts: mutable.channelPts, heldBack: result.heldBack, applied: result.applied,
                       duplicates: result.duplicates, implausible: result.implausible.count, mutations: mutable.operations.count,
                       reset: result.reset, channelsToFetch: result.channelsToFetch)
    }
}
