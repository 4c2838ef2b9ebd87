import Boxwood
@testable import BoxwoodSync
import Testing

/// Branches of a batch, one per channel fetched in parallel, merged back: each keeps the cursor it moved.
@Suite struct SyncMutableStateTests {
    @Test func mergedBranchesKeepEachChannelsProgress() {
        let cursor = SyncAccountState(pts: 10, qts: 0, date: 0, seq: 0)
        var batch = SyncMutableState(initialState: cursor, state: cursor, storedAnswers: 0)
        let channels = (1...4).map { PeerId(namespace: SyncNamespaces.channel, id: PeerId.Id(Int64(3_000 + $0))) }
        for (i, channel) in channels.enumerated() { batch.loadChannel(channel, storedPts: Int32(100 * (i + 1))) }
        let base = batch
        // Each branch moves only its own channel; they are merged in channel order, as fetchChannels does.
        let branches = channels.enumerated().map { i, channel -> SyncMutableState in
            var branch = base.branch()
            branch.setChannelPts(channel, Int32(100 * (i + 1) + 7))
            return branch
        }
        for branch in branches { batch.merge(branch) }
        for (i, channel) in channels.enumerated() {
            #expect(batch.channelPts[channel] == Int32(100 * (i + 1) + 7), "channel \(channel) lost its progress to a later branch")
        }
        #expect(batch.operations.count == channels.count)
    }
}
