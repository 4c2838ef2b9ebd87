/// The live views of a Postbox (Postbox's `ViewTracker`), used only on the Postbox queue. After every
/// transaction that changed something (before the value box commits, as in Postbox) each registered
/// combined view replays the change record; the ones that changed emit a new snapshot. After another
/// process's commits every view is rebuilt from the tables.
///
/// Registrations are kept in registration order without sorting: an array of slots (nil once removed) and a
/// dictionary from id to slot. Adding appends; removing empties the slot, and the array is compacted when
/// more than half of it is empty — O(1) amortized either way.
final class ViewTracker {
    private final class Registration {
        let id: Int
        let views: [(PostboxViewKey, any MutablePostboxView)]
        /// The views updated first, and those derived from them (updated after every plain view).
        let plainViews: [any MutablePostboxView]
        let derivedViews: [any MutablePostboxView]
        let emit: (CombinedView) -> Void
        /// Called when the registration ends with the Postbox (not when its consumer removes it).
        let end: (() -> Void)?

        init(id: Int, views: [(PostboxViewKey, any MutablePostboxView)], emit: @escaping (CombinedView) -> Void, end: (() -> Void)?) {
            self.id = id
            self.views = views
            plainViews = views.filter { !$0.0.isDerived }.map(\.1)
            derivedViews = views.filter { $0.0.isDerived }.map(\.1)
            self.emit = emit
            self.end = end
        }

        func snapshot() -> CombinedView {
            var result: [PostboxViewKey: any PostboxView] = [:]
            for (key, view) in views { result[key] = view.immutableView() }
            return CombinedView(views: result)
        }
    }

    /// Registrations in registration order; nil where one was removed.
    private var slots: [Registration?] = []
    /// The slot of each live registration.
    private var slotById: [Int: Int] = [:]
    private var nextId = 0

    /// Live registrations (for tests: no view outlives its consumer).
    var count: Int { slotById.count }

    /// The live registrations in registration order. The array is a copy (copy-on-write), so a consumer may
    /// add or remove registrations while the caller iterates it.
    private var live: [Registration] { slots.compactMap { $0 } }

    /// Builds the views of `keys` from the tables, emits their first snapshot and registers them. Derived
    /// views (holes) see the registration's own history and chat-list views. `end` runs if the registration is
    /// still live when the Postbox closes (``endAll()``).
    func add(keys: [PostboxViewKey], tables: PostboxTables, emit: @escaping (CombinedView) -> Void,
             end: (() -> Void)? = nil) throws -> Int {
        var views: [(PostboxViewKey, any MutablePostboxView)] = []
        let unique = Set(keys)
        for key in unique where !key.isDerived { views.append((key, try key.makeView(tables: tables, tracker: self))) }
        let id = nextId
        nextId += 1
        // Registered first with its plain views, so that its own derived views count them.
        insert(Registration(id: id, views: views, emit: emit, end: end))
        do {
            var all = views
            for key in unique where key.isDerived { all.append((key, try key.makeView(tables: tables, tracker: self))) }
            let registration = Registration(id: id, views: all, emit: emit, end: end)
            slots[slotById[id]!] = registration  // `insert` gave `id` a slot; only `remove(id)` takes it, and nobody has `id` yet
            try refreshDerivedViews(tables: tables, except: id)
            emit(registration.snapshot())
        } catch {
            // Nobody gets the id: a registration left behind would stay live for good.
            remove(id, tables: tables)
            throw error
        }
        return id
    }

    private func insert(_ registration: Registration) {
        slotById[registration.id] = slots.count
        slots.append(registration)
    }

    /// The current snapshot of a registration (nil when it is gone).
    func snapshot(_ id: Int) -> CombinedView? { slotById[id].flatMap { slots[$0] }?.snapshot() }

    /// Every live view of one kind.
    func liveViews<V: MutablePostboxView>(of type: V.Type) -> [V] {
        var result: [V] = []
        for case let registration? in slots {
            for (_, view) in registration.views { if let view = view as? V { result.append(view) } }
        }
        return result
    }

    /// Brings the derived views of other registrations up to date after views were added or removed, and emits
    /// for those that changed.
    private func refreshDerivedViews(tables: PostboxTables, except excluded: Int? = nil) throws {
        for registration in live where registration.id != excluded && !registration.derivedViews.isEmpty {
            var changed = false
            for view in registration.derivedViews {
                if try view.refresh(tables: tables) { changed = true }
            }
            if changed { registration.emit(registration.snapshot()) }
        }
    }

    func remove(_ id: Int, tables: PostboxTables) {
        guard let slot = slotById.removeValue(forKey: id) else { return }
        slots[slot] = nil
        if slots.count > 16 && slotById.count * 2 < slots.count { compact() }
        try? refreshDerivedViews(tables: tables)
    }

    /// Drops every registration and runs each one's `end` (the Postbox is closing): no view is updated or
    /// emits afterwards.
    func endAll() {
        let ending = live
        slots = []
        slotById = [:]
        for registration in ending { registration.end?() }
    }

    /// Drops the empty slots, keeping the order.
    private func compact() {
        let kept = live
        slots = kept
        slotById.removeAll(keepingCapacity: true)
        for (slot, registration) in kept.enumerated() { slotById[registration.id] = slot }
    }

    /// Replays a transaction's changes into every view: first every plain view, then the derived ones (which
    /// read the plain views), then each registration that changed emits one snapshot. Iterates over a copy,
    /// so a consumer may add or remove views while being notified.
    func updateViews(tables: PostboxTables, changes: PostboxChanges) throws {
        let registrations = slots
        var changed = [Bool](repeating: false, count: registrations.count)
        for derivedPass in [false, true] {
            for (position, registration) in registrations.enumerated() {
                guard let registration else { continue }
                for view in derivedPass ? registration.derivedViews : registration.plainViews {
                    let viewChanged = changes.sawExternalCommits ? try view.refresh(tables: tables) : try view.replay(tables: tables, changes: changes)
                    if viewChanged { changed[position] = true }
                }
            }
        }
        for (position, registration) in registrations.enumerated() {
            if changed[position], let registration { registration.emit(registration.snapshot()) }
        }
    }
}
