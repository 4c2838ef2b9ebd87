import BoxwoodStore
/// Ordered reads over tables whose keys are `prefix ‖ timestamp(4) ‖ id(4)` with one prefix per message
/// namespace (the history table 7: `peerId ‖ namespace`; the tags table 12: `peerId ‖ tag ‖ namespace`).
///
/// Within one prefix the keys are in (timestamp, id) order, which is ``MessageIndex`` order for non-negative
/// timestamps and ids (big-endian keys compare as unsigned). A read in ``MessageIndex`` order across namespaces
/// takes up to `limit` entries from each namespace and merges them.
public enum HistoryReadDirection: Sendable {
    /// Indices less than the anchor, descending.
    case earlier
    /// Indices greater than the anchor, ascending.
    case later
}

struct HistoryKeyRanges {
    /// The exclusive (start, end) keys of the entries of `namespace` under `prefix` that are before (`.earlier`)
    /// or after (`.later`) `anchor` in ``MessageIndex`` order; nil anchor: from the newest or the oldest entry.
    static func bounds(prefix: ValueBoxKey, namespace: MessageId.Namespace, anchor: MessageIndex?,
                       direction: HistoryReadDirection) -> (start: ValueBoxKey, end: ValueBoxKey) {
        let upperEnd = prefix.paddedWithFF(9)
        guard let anchor else {
            return direction == .earlier ? (upperEnd, prefix) : (prefix, upperEnd)
        }
        // Stored timestamps and ids are non-negative (see the type's documentation): a negative anchor is below all.
        if anchor.timestamp < 0 {
            return direction == .earlier ? (prefix, prefix) : (prefix, upperEnd)
        }
        var timestampKey = ValueBoxKey(length: 4)
        timestampKey.setInt32(0, value: anchor.timestamp)
        let atTimestamp = prefix + timestampKey
        let start: ValueBoxKey
        if namespace == anchor.id.namespace && anchor.id.id >= 0 {
            var idKey = ValueBoxKey(length: 4)
            idKey.setInt32(0, value: anchor.id.id)
            start = atTimestamp + idKey
        } else if namespace < anchor.id.namespace {
            // Every entry at the anchor's timestamp is below the anchor.
            start = atTimestamp.paddedWithFF(4).immediateSuccessor
        } else {
            // Every entry at the anchor's timestamp is above the anchor (a greater namespace, or the same namespace
            // with a negative anchor id).
            start = atTimestamp
        }
        return direction == .earlier ? (start, prefix) : (start, upperEnd)
    }

    /// The index of a key `prefix(prefixLength) ‖ timestamp ‖ id` of `peerId` and `namespace`, or nil when the key
    /// has another length.
    static func index(key: ValueBoxKey, prefixLength: Int, peerId: PeerId, namespace: MessageId.Namespace) -> MessageIndex? {
        guard key.length == prefixLength + 8 else { return nil }
        return MessageIndex(id: MessageId(peerId: peerId, namespace: namespace, id: key.getInt32(prefixLength + 4)),
                            timestamp: key.getInt32(prefixLength))
    }

    /// Merges per-namespace lists (each already in `direction` order) and keeps the first `limit`.
    static func merge(_ lists: [[MessageIndex]], direction: HistoryReadDirection, limit: Int) -> [MessageIndex] {
        var all = lists.flatMap { $0 }
        if direction == .earlier { all.sort(by: >) } else { all.sort() }
        if limit > 0 && all.count > limit { all.removeLast(all.count - limit) }
        return all
    }
}
