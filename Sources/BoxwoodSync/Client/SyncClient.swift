import Boxwood
import BoxwoodStore

/// A synced account on an embedded database: the Postbox, the state manager, the hole filler and the outbound
/// queue, started and stopped together.
///
/// **One sync client per database.** Several processes share one database (an app and its extensions), but only
/// the master client syncs it (Postbox's `MasterClientId`). ``start(mastership:)`` claims the database — at once
/// (``SyncMastership/takeOver``, the app in the foreground) or only when no running process holds it
/// (``SyncMastership/ifVacant``, an extension; a master whose process was killed is taken over). From then on
/// every transaction of the sync engine checks, inside the transaction, that this client is still the master
/// (``SyncMasterFence``); the first that finds another master stops this client (``SyncEvent/mastershipLost(_:)``).
/// A client syncs for one term: after ``stopSyncing()`` or a lost claim, create a new one to sync again. What the
/// app does through ``outbound`` (send, read, edit) is stored in any process: the master's queue sends it.
public final class SyncClient: Sendable {
    public let postbox: Postbox
    public let manager: AccountStateManager
    public let holeFiller: MessageHistoryHoleFiller
    /// Fills the chat list's hole while a chat-list view shows it.
    public let chatListHoleFiller: ChatListHoleFiller
    public let outbound: OutboundQueue
    public let accountPeerId: PeerId
    /// Fences the engine's transactions once the client claimed the database.
    private let fence: SyncMasterFence
    /// The store under the fence (the app's and the claim's transactions run on it).
    private let store: any SyncStore

    /// What a sync database is created with: every chat starts as one hole; account-wide message ids of users
    /// and groups are indexed (deletes name only the id); text is indexed for search.
    public static var seedConfiguration: SeedConfiguration {
        let cloud = SyncNamespaces.cloudMessages
        // Each media tag is a hole space of its own (shared-media views fill through searchHistory), and so are unread
        // mentions (filled through getUnreadMentions; counted per chat for the chat list).
        let everywhere: [MessageId.Namespace: Set<MessageTags>] = [cloud: Set(SyncMessageTags.holeSpaces)]
        return SeedConfiguration(
            messageHoles: [SyncNamespaces.user: everywhere, SyncNamespaces.group: everywhere,
                           SyncNamespaces.channel: everywhere, SyncNamespaces.secretChat: everywhere],
            defaultMessageNamespaceReadStates: [cloud: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)],
            chatMessagesNamespaces: [cloud, SyncNamespaces.localMessages],
            indexMessageText: true,
            globalMessageIdsNamespaces: [
                GlobalMessageIdsNamespace(peerIdNamespace: SyncNamespaces.user, messageIdNamespace: cloud),
                GlobalMessageIdsNamespace(peerIdNamespace: SyncNamespaces.group, messageIdNamespace: cloud),
            ],
            chatListMentionTag: SyncMessageTags.unseenMention
        )
    }

    /// Registers the types the sync layer stores (safe to call more than once). Throws when one of them collides
    /// with a type the app registered (see ``PostboxTypeRegistrationError``).
    public static func registerTypes() throws(PostboxTypeRegistrationError) {
        try declareEncodable(SyncUser.self)
        try declareEncodable(SyncChat.self)
        try declareEncodable(SyncUserPresence.self)
        try declareEncodable(SyncNotificationSettings.self)
        try declareEncodable(SyncMessageAttribute.self)
        try declareEncodable(SyncMediaImage.self)
        try declareEncodable(SyncMediaFile.self)
        try declareEncodable(SyncMediaWebPage.self)
        try declareEncodable(SyncMediaUnsupported.self)
        try declareEncodable(SyncTextEntitiesAttribute.self)
        try declareEncodable(SyncReplyAttribute.self)
        try declareEncodable(SyncReactionsAttribute.self)
        try declareEncodable(SyncCountersAttribute.self)
        try declareEncodable(SyncAccountState.self)
        try declareEncodable(SyncClientIdentity.self)
        try declareEncodable(SyncStoredAnswers.self)
        try declareEncodable(SendMessageOperation.self)
        try declareEncodable(SynchronizeReadStateOperation.self)
        try declareEncodable(EditMessageOperation.self)
        try declareEncodable(DeleteMessagesOperation.self)
        try declareEncodable(SendReactionOperation.self)
        try declareEncodable(SyncSendFailureAttribute.self)
        try declareEncodable(SendMediaOperation.self)
        try declareEncodable(ForwardMessagesOperation.self)
        try declareEncodable(SaveDraftOperation.self)
        try declareEncodable(ReadMentionsOperation.self)
        try declareEncodable(SyncDialogListGeneration.self)
    }

    /// Opens (or creates) the database at `path` for the account.
    public static func open(path: String, accountPeerId: PeerId, transport: any SyncTransport,
                            configuration: SyncConfiguration = SyncConfiguration(),
                            options: ValueBoxOptions = ValueBoxOptions()) async throws -> SyncClient {
        let postbox = try await openPostbox(path: path, options: options)
        return SyncClient(postbox: postbox, transport: transport, accountPeerId: accountPeerId, configuration: configuration)
    }

    /// A client of the account on `postbox`. Every transaction of the sync layer runs on `store`: `postbox`
    /// unless given (a test puts a store in front of it that fails).
    public init(postbox: Postbox, store: (any SyncStore)? = nil, transport: any SyncTransport, accountPeerId: PeerId,
                configuration: SyncConfiguration) {
        self.postbox = postbox
        self.accountPeerId = accountPeerId
        let store = store ?? postbox
        let fence = SyncMasterFence()
        let fenced = SyncMasterFencedStore(base: store, fence: fence)
        self.store = store
        self.fence = fence
        manager = AccountStateManager(store: fenced, transport: transport, accountPeerId: accountPeerId, configuration: configuration)
        holeFiller = MessageHistoryHoleFiller(postbox: postbox, store: fenced, manager: manager, transport: transport, configuration: configuration)
        chatListHoleFiller = ChatListHoleFiller(postbox: postbox, manager: manager)
        outbound = OutboundQueue(postbox: postbox, store: fenced, manager: manager, transport: transport)
    }

    /// Claims the database for this client (the master client, see ``SyncMastership``) and starts syncing:
    /// difference first, then pushes; hole filling and outbound queues.
    ///
    /// - Throws: ``SyncError/masterElsewhere(processId:)`` when `mastership` is ``SyncMastership/ifVacant`` and
    ///   another running process holds the database (nothing started; the app reads what that process stores);
    ///   ``SyncError/storage(_:)`` when the claim could not be stored.
    public func start(mastership: SyncMastership = .takeOver) async throws(SyncError) {
        let holder: MasterClientState
        do {
            holder = try await store.run(.claimMastership) { transaction in
                let holder = try transaction.masterClientState()
                if mastership == .ifVacant, case .running = holder { return holder }
                try transaction.becomeMasterClient()
                return .this
            }
        } catch {
            throw .storage(error)
        }
        if case let .running(processId) = holder { throw .masterElsewhere(processId: processId) }
        fence.arm { [weak self] holder in
            Task { await self?.lostMastership(to: holder) }
        }
        await manager.start()
        await holeFiller.start()
        await chatListHoleFiller.start()
        await outbound.start()
    }

    /// Who holds the database now (``MasterClientState/this`` while this client syncs it).
    public func mastershipState() async throws(SyncError) -> MasterClientState {
        do {
            return try await store.run(.claimMastership) { transaction in try transaction.masterClientState() }
        } catch {
            throw .storage(error)
        }
    }

    /// Another client claimed the database: every part stops (the manager's last event is
    /// ``SyncEvent/mastershipLost(_:)``).
    private func lostMastership(to holder: MasterClientState) async {
        await outbound.stop()
        await holeFiller.stop()
        await chatListHoleFiller.stop()
        await manager.stop(lostMastershipTo: holder)
        fence.disarm()
    }

    /// Stops every part (requests in flight stop retrying) and gives up the claim on the database, so that another
    /// process may sync it (``SyncMastership/ifVacant``); the Postbox stays open. What an app does when it leaves
    /// the foreground.
    ///
    /// - Throws: ``SyncError/storage(_:)`` when giving up the claim could not be stored (the parts are stopped;
    ///   the claim stays until another client takes over, or this process ends).
    public func stopSyncing() async throws(SyncError) {
        await outbound.stop()
        await holeFiller.stop()
        await chatListHoleFiller.stop()
        await manager.stop()
        guard fence.isArmed else { return }
        fence.disarm()
        do {
            try await store.run(.resignMastership) { transaction in try transaction.resignMasterClient() }
        } catch {
            throw .storage(error)
        }
    }

    /// Stops syncing (``stopSyncing()``) and closes the database.
    public func stop() async throws {
        try await stopSyncing()
        try await postbox.close()
    }

    /// Returns once the state manager is idle and no hole fill or outbound operation is running or waiting,
    /// three checks in a row `interval` apart (work hands off between the parts).
    public func waitUntilQuiet(interval: Duration = .milliseconds(20)) async {
        var quietChecks = 0
        while quietChecks < 3 {
            await manager.waitUntilIdle()
            let fillerBusy = await holeFiller.isBusy
            let listFillerBusy = await chatListHoleFiller.isBusy
            let outboundBusy = await outbound.isBusy
            let managerIdle = await manager.isIdle
            let busy = fillerBusy || listFillerBusy || outboundBusy || !managerIdle
            quietChecks = busy ? 0 : quietChecks + 1
            // Throws only when the caller's task is cancelled: the checks go on (they end once all is quiet).
            try? await Task.sleep(for: interval)
        }
    }
}
