import BoxwoodStore

/// How one table changed between two ``TableStatistics`` lists (as `watch` prints them).
struct TableChange: Equatable {
    enum Kind: String {
        case changed, new, removed
    }

    let id: Int32
    let kind: Kind
    let entriesDelta: Int
    let bytesDelta: Int

    /// `table 1 +2 entries, +50 bytes` (`new`/`removed` say so; a zero part is left out).
    var text: String {
        var parts: [String] = []
        if entriesDelta != 0 { parts.append((entriesDelta > 0 ? "+" : "-") + counted(abs(entriesDelta), "entry")) }
        if bytesDelta != 0 { parts.append((bytesDelta > 0 ? "+" : "-") + counted(abs(bytesDelta), "byte")) }
        let counts = parts.isEmpty ? "" : " " + parts.joined(separator: ", ")
        switch kind {
        case .changed: return "table \(id)\(counts)"
        case .new: return "table \(id) new\(counts)"
        case .removed: return "table \(id) removed\(counts)"
        }
    }

    /// The tables whose entry count or size differs between `old` and `new`, by id.
    static func between(_ old: [TableStatistics], _ new: [TableStatistics]) -> [TableChange] {
        let before = Dictionary(old.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let after = Dictionary(new.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var changes: [TableChange] = []
        for id in Set(before.keys).union(after.keys).sorted() {
            switch (before[id], after[id]) {
            case let (b?, a?):
                if a.entries != b.entries || a.bytes != b.bytes {
                    changes.append(TableChange(id: id, kind: .changed, entriesDelta: a.entries - b.entries, bytesDelta: a.bytes - b.bytes))
                }
            case let (nil, a?):
                changes.append(TableChange(id: id, kind: .new, entriesDelta: a.entries, bytesDelta: a.bytes))
            case let (b?, nil):
                changes.append(TableChange(id: id, kind: .removed, entriesDelta: -b.entries, bytesDelta: -b.bytes))
            case (nil, nil):
                break
            }
        }
        return changes
    }
}

/// `+3`, `-2`, `0`.
func signed(_ n: Int) -> String { n > 0 ? "+\(n)" : "\(n)" }
