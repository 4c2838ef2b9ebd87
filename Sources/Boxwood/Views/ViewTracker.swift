/// The live views of a Postbox (Postbox's `ViewTracker`), used only on the Postbox queue. After every
/// transaction that changed something (before the value box commits, as in Postbox) each registered
/// combined view replays the change record; the ones that changed emit a new snapshot. After another
/// process's commits every view is rebuilt from the tables.
///
/// Registrations are kept in registration order without sorting: an array of slots (nil once removed) and a
/// dictionary from id to slot. Adding appends; removing empties the slot, and the array is compacted when
/// more than half of it is empty — O(1) amortized either way.
final class ViewTracker {
    /// How a registration ends other than by its consumer: nil when the Postbox closes, else the error that stops
    /// every view of the registration (``failAll(_:)``).
    typealias End = ((any Error)?) -> Void

    private final class Registration {
        let id: Int
        /// The live views, in request order (plain keys first, then derived ones).
        private(set) var views: [(key: PostboxViewKey, view: any MutablePostboxView)]
        /// The views updated first, and those derived from them (updated after every plain view).
        private(set) var plainViews: [(key: PostboxViewKey, view: any MutablePostboxView)] = []
        private(set) var derivedViews: [(key: PostboxViewKey, view: any MutablePostboxView)] = []
        /// The keys whose views failed; a key is either here or in `views`.
        private(set) var failures: [PostboxViewKey: PostboxViewError]
        let emit: (CombinedView) -> Void
        let end: End?

        init(id: Int, views: [(key: PostboxViewKey, view: any MutablePostboxView)], failures: [PostboxViewKey: PostboxViewError],
             emit: @escaping (CombinedView) -> Void, end: End?) {
            self.id = id
            self.views = views
            self.failures = failures
            self.emit = emit
            self.end = end
            split()
        }

        func append(_ key: PostboxViewKey, _ view: any MutablePostboxView) {
            views.append((key, view))
            split()
        }

        /// Takes the view of `key` out of every update: from now on the key is a failure.
        func fail(_ key: PostboxViewKey, _ error: any Error) {
            views.removeAll { $0.key == key }
            failures[key] = ViewTracker.failure(of: key, error)
            split()
        }

        private func split() {
            plainViews = views.filter { !$0.key.isDerived }
            derivedViews = views.filter { $0.key.isDerived }
        }

        func snapshot() -> CombinedView {
            var result: [PostboxViewKey: any PostboxView] = [:]
            for (key, view) in views { result[key] = view.immutableView() }
            return CombinedView(views: result, failures: failures)
        }
    }

    /// The failure of `key`'s view, logged: the consumer gets it in its next snapshot, the log keeps it for whoever
    /// reads logs.
    static func failure(of key: PostboxViewKey, _ error: any Error) -> PostboxViewError {
        PostboxLog.logger.warning("a live view failed", metadata: ["view": "\(key)", "error": "\(error)"])
        return PostboxViewError(key: key, underlying: error)
    }

    /// What a view is doing when ``injectedFailure`` is asked.
    enum Operation { case build, update }

    /// A test seam: asked before each view is built and before each update (replay or refresh) of a view; an
    /// error it returns is thrown there as the view's own. Nil (always, outside tests): nothing is asked.
    var injectedFailure: ((PostboxViewKey, Operation) -> (any Error)?)?

    /// Builds the view of `key`, or throws why it cannot be built.
    private func makeView(_ key: PostboxViewKey, tables: PostboxTables) throws -> any MutablePostboxView {
        if let error = injectedFailure?(key, .build) { throw error }
        return try key.makeView(tables: tables, tracker: self)
    }

    /// Brings the view of `key` up to date (a rebuild after other processes' commits, else a replay of
    /// `changes`; nil: a rebuild); true when it changed.
    private func update(_ key: PostboxViewKey, _ view: any MutablePostboxView, tables: PostboxTables, changes: PostboxChanges?) throws -> Bool {
        if let error = injectedFailure?(key, .update) { throw error }
        guard let changes, !changes.sawExternalCommits else { return try view.refresh(tables: tables) }
        return try view.replay(tables: tables, changes: changes)
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

    /// Builds the views of `keys` from the tables, emits their first snapshot and registers them. A key whose view
    /// cannot be built fails alone: the snapshot lists it in ``CombinedView/failures`` and the other keys are live.
    /// Derived views (holes) see the registration's own history and chat-list views. `end` runs if the
    /// registration is still live when the Postbox closes (``endAll()``) or its views are stopped by an error
    /// (``failAll(_:)``).
    func add(keys: [PostboxViewKey], tables: PostboxTables, emit: @escaping (CombinedView) -> Void, end: End? = nil) -> Int {
        var views: [(key: PostboxViewKey, view: any MutablePostboxView)] = []
        var failures: [PostboxViewKey: PostboxViewError] = [:]
        var unique: [PostboxViewKey] = []
        var seen = Set<PostboxViewKey>()
        for key in keys where seen.insert(key).inserted { unique.append(key) }
        for key in unique where !key.isDerived {
            do { views.append((key, try makeView(key, tables: tables))) } catch { failures[key] = Self.failure(of: key, error) }
        }
        let id = nextId
        nextId += 1
        // Registered first with its plain views, so that its own derived views count them.
        let registration = Registration(id: id, views: views, failures: failures, emit: emit, end: end)
        insert(registration)
        for key in unique where key.isDerived {
            do { registration.append(key, try makeView(key, tables: tables)) } catch { registration.fail(key, error) }
        }
        refreshDerivedViews(tables: tables, except: id)
        emit(registration.snapshot())
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
    /// for those that changed (a derived view that fails to refresh fails alone).
    private func refreshDerivedViews(tables: PostboxTables, except excluded: Int? = nil) {
        for registration in live where registration.id != excluded && !registration.derivedViews.isEmpty {
            var changed = false
            for (key, view) in registration.derivedViews {
                do {
                    if try update(key, view, tables: tables, changes: nil) { changed = true }
                } catch {
                    registration.fail(key, error)
                    changed = true
                }
            }
            if changed { registration.emit(registration.snapshot()) }
        }
    }

    func remove(_ id: Int, tables: PostboxTables) {
        guard let slot = slotById.removeValue(forKey: id) else { return }
        slots[slot] = nil
        if slots.count > 16 && slotById.count * 2 < slots.count { compact() }
        refreshDerivedViews(tables: tables)
    }

    /// Drops every registration and runs each one's `end` with nil (the Postbox is closing): no view is updated
    /// or emits afterwards.
    func endAll() {
        for registration in takeAll() { registration.end?(nil) }
    }

    /// Drops every registration and runs each one's `end` with `error`: something every view depends on failed
    /// (watching other processes' commits, or the transaction that refreshes the views after them).
    func failAll(_ error: any Error) {
        for registration in takeAll() { registration.end?(error) }
    }

    private func takeAll() -> [Registration] {
        let ending = live
        slots = []
        slotById = [:]
        return ending
    }

    /// Drops the empty slots, keeping the order.
    private func compact() {
        let kept = live
        slots = kept
        slotById.removeAll(keepingCapacity: true)
        for (slot, registration) in kept.enumerated() { slotById[registration.id] = slot }
    }

    /// Replays a transaction's changes into every view: first every plain view, then the derived ones (which
    /// read the plain views), then each registration that changed emits one snapshot. A view that fails fails
    /// alone (its registration emits the failure; the transaction goes on). Iterates over a copy, so a consumer
    /// may add or remove views while being notified.
    func updateViews(tables: PostboxTables, changes: PostboxChanges) {
        let registrations = slots
        var changed = [Bool](repeating: false, count: registrations.count)
        for derivedPass in [false, true] {
            for (position, registration) in registrations.enumerated() {
                guard let registration else { continue }
                for (key, view) in derivedPass ? registration.derivedViews : registration.plainViews {
                    do {
                        if try update(key, view, tables: tables, changes: changes) { changed[position] = true }
                    } catch {
                        registration.fail(key, error)
                        changed[position] = true
                    }
                }
            }
        }
        for (position, registration) in registrations.enumerated() {
            if changed[position], let registration { registration.emit(registration.snapshot()) }
        }
    }
}
