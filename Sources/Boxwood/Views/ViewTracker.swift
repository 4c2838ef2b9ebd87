/// The live views of a Postbox (Postbox's `ViewTracker`), used only on the Postbox queue. After every
/// transaction that changed something (before the value box commits, as in Postbox) each registered
/// combined view replays the change record; the ones that changed emit a new snapshot. After another
/// process's commits every view is rebuilt from the tables. Registration and removal are O(1).
final class ViewTracker {
    private final class Registration {
        let views: [(PostboxViewKey, any MutablePostboxView)]
        let emit: (CombinedView) -> Void

        init(views: [(PostboxViewKey, any MutablePostboxView)], emit: @escaping (CombinedView) -> Void) {
            self.views = views
            self.emit = emit
        }

        func snapshot() -> CombinedView {
            var result: [PostboxViewKey: any PostboxView] = [:]
            for (key, view) in views { result[key] = view.immutableView() }
            return CombinedView(views: result)
        }
    }

    private var registrations: [Int: Registration] = [:]
    private var nextId = 0

    /// Live registrations (for tests: no view outlives its consumer).
    var count: Int { registrations.count }

    /// Builds the views of `keys` from the tables, emits their first snapshot and registers them. Derived
    /// views (holes) see the registration's own history and chat-list views.
    func add(keys: [PostboxViewKey], tables: PostboxTables, emit: @escaping (CombinedView) -> Void) throws -> Int {
        var views: [(PostboxViewKey, any MutablePostboxView)] = []
        let unique = Set(keys)
        for key in unique where !key.isDerived { views.append((key, try key.makeView(tables: tables, tracker: self))) }
        let id = nextId
        nextId += 1
        registrations[id] = Registration(views: views, emit: emit)
        var all = views
        for key in unique where key.isDerived { all.append((key, try key.makeView(tables: tables, tracker: self))) }
        let registration = Registration(views: all, emit: emit)
        registrations[id] = registration
        try refreshDerivedViews(tables: tables)
        emit(registration.snapshot())
        return id
    }

    /// The current snapshot of a registration (nil when it is gone).
    func snapshot(_ id: Int) -> CombinedView? { registrations[id]?.snapshot() }

    /// Every live view of one kind.
    func liveViews<V: MutablePostboxView>(of type: V.Type) -> [V] {
        registrations.values.flatMap { $0.views.compactMap { $0.1 as? V } }
    }

    /// Brings the derived views of other registrations up to date after views were added or removed, and emits
    /// for those that changed.
    private func refreshDerivedViews(tables: PostboxTables) throws {
        for (_, registration) in registrations.sorted(by: { $0.key < $1.key }) {
            var changed = false
            for (key, view) in registration.views where key.isDerived {
                if try view.refresh(tables: tables) { changed = true }
            }
            if changed { registration.emit(registration.snapshot()) }
        }
    }

    func remove(_ id: Int, tables: PostboxTables) {
        registrations.removeValue(forKey: id)
        try? refreshDerivedViews(tables: tables)
    }

    /// Replays a transaction's changes into every view. Iterates over a copy, so a consumer may add or remove
    /// views while being notified.
    func updateViews(tables: PostboxTables, changes: PostboxChanges) throws {
        let ordered = registrations.sorted(by: { $0.key < $1.key })
        var changedIds = Set<Int>()
        // Derived views (holes) after every other view.
        for derivedPass in [false, true] {
            for (id, registration) in ordered {
                for (key, view) in registration.views where key.isDerived == derivedPass {
                    let changed = changes.sawExternalCommits ? try view.refresh(tables: tables) : try view.replay(tables: tables, changes: changes)
                    if changed { changedIds.insert(id) }
                }
            }
        }
        for (id, registration) in ordered where changedIds.contains(id) { registration.emit(registration.snapshot()) }
    }
}
