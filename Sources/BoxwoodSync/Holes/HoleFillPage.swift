import Boxwood

/// One getHistory page for a hole a view shows, fetched from the side the view looks at (Telegram's
/// `fetchMessageHistoryHole` with its `offset_id`/`add_offset`): the hole's newest messages when the view is above
/// it, its oldest when the view is below it, and the neighbourhood of the view's anchor when the anchor lies in it.
/// The answer is one contiguous window of the server's messages in the hole; ``filledRange(_:peerId:)`` says which
/// part of the hole it proves known.
struct HoleFillPage: Hashable, Sendable {
    /// The hole (closed id range).
    let range: ClosedRange<Int32>
    let direction: MessageHistoryHoleDirection
    /// Messages asked for (at least 1).
    let limit: Int32

    init(range: ClosedRange<Int32>, direction: MessageHistoryHoleDirection, limit: Int32) {
        self.range = range
        self.direction = direction
        self.limit = max(1, limit)
    }

    /// Messages asked for at and above the anchor of an `aroundId` page (the rest are below it).
    private var aboveAnchor: Int32 { max(1, limit / 2) }

    /// `getHistory`'s exclusive upper bound: just above the hole (0, no bound, when the hole reaches the top of the
    /// id space).
    var maxId: Int32 { range.upperBound >= Int32.max - 1 ? 0 : range.upperBound + 1 }
    /// `getHistory`'s exclusive lower bound: just below the hole.
    var minId: Int32 { range.lowerBound > Int32.min ? range.lowerBound - 1 : Int32.min }

    /// `getHistory`'s `offset_id`: 0 (the newest) from the top, the hole's lower end from the bottom, the anchor
    /// around it.
    var offsetId: Int32 {
        switch direction {
        case .upperToLower: return 0
        case .lowerToUpper: return range.lowerBound
        case let .aroundId(id): return range.contains(id.id) ? id.id : 0
        }
    }

    /// `getHistory`'s `add_offset`: 0 from the top; `-limit` from the bottom (the `limit` messages at and above the
    /// lower end, i.e. the hole's oldest); `-limit / 2` around the anchor (half at and above it, half below).
    var addOffset: Int32 {
        switch direction {
        case .upperToLower: return 0
        case .lowerToUpper: return -limit
        case let .aroundId(id): return range.contains(id.id) ? -aboveAnchor : 0
        }
    }

    /// The part of the hole an answer proves known: from the lowest to the highest of its messages in the hole,
    /// widened to the hole's end on each side the window reached (a short page reached the far side; from the
    /// top, the top; from the bottom, the bottom; around the anchor, the top when fewer than the asked-for
    /// messages at and above the anchor came). Nil when it proves nothing (a full page with no message in the hole).
    func filledRange(_ messages: [ApiMessage], peerId: PeerId) -> ClosedRange<Int32>? {
        let inHole = messages.lazy.filter { $0.peerId == peerId && range.contains($0.id) }.map(\.id)
        let short = messages.count < Int(limit)
        let (reachesTop, reachesBottom): (Bool, Bool)
        switch direction {
        case .upperToLower:
            (reachesTop, reachesBottom) = (true, short)
        case .lowerToUpper:
            (reachesTop, reachesBottom) = (short, true)
        case let .aroundId(id):
            if range.contains(id.id) {
                (reachesTop, reachesBottom) = (inHole.filter { $0 >= id.id }.count < Int(aboveAnchor), short)
            } else {
                (reachesTop, reachesBottom) = (true, short)
            }
        }
        if reachesTop, reachesBottom { return range }
        guard let lowest = inHole.min(), let highest = inHole.max() else { return nil }
        return (reachesBottom ? range.lowerBound : lowest)...(reachesTop ? range.upperBound : highest)
    }
}
