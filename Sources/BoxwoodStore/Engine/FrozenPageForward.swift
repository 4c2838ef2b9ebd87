/// Where a background checkpoint wrote each frozen dirty page: frozen page index → the disk reference it was written
/// as. An array, not a dictionary: the install looks up every child of every page made after the freeze, on the
/// committing thread.
///
/// Invariant: a slot holds 0 until its page is written (no tree page is written as page 0, a meta page), so 0 reads
/// as "not written"; indices past the frozen pages read the same.
struct FrozenPageForward {
    private var references: [UInt64]

    /// A map for `count` frozen page slots, none written yet.
    init(count: Int) { references = [UInt64](repeating: 0, count: count) }

    /// The disk reference frozen page `index` was written as; nil when the checkpoint did not write it.
    subscript(index: Int) -> UInt64? {
        get {
            guard index >= 0, index < references.count, references[index] != 0 else { return nil }
            return references[index]
        }
        set { references[index] = newValue ?? 0 }
    }
}
