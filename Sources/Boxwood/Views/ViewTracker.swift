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

    /// Builds the views of `keys` from the tables, emits their first snapshot and registers them.
    func add(keys: [PostboxViewKey], tables: PostboxTables, emit: @escaping (CombinedView) -> Void) throws -> Int {
        var views: [(PostboxViewKey, any MutablePostboxView)] = []
        for key in Set(keys) { views.append((key, try key.makeView(tables: tables))) }
        let registration = Registration(views: views, emit: emit)
        let id = nextId
        nextId += 1
        registrations[id] = registration
        emit(registration.snapshot())
        return id
    }

    func remove(_ id: Int) {
        registrations.removeValue(forKey: id)
    }

    /// Replays a transaction's changes into every view. Iterates over a copy, so a consumer may add or remove
    /// views while being notified.
    func updateViews(tables: PostboxTables, changes: PostboxChanges) throws {
        for (_, registration) in registrations.sorted(by: { $0.key < $1.key }) {
            var changed = false
            for (_, view) in registration.views {
                if changes.sawExternalCommits {
                    if try view.refresh(tables: tables) { changed = true }
                } else if try view.replay(tables: tables, changes: changes) {
                    changed = true
                }
            }
            if changed { registration.emit(registration.snapshot()) }
        }
    }
}
