import Boxwood
import BoxwoodStore

/// A synced account on an embedded database: the Postbox, the state manager, the hole filler and the outbound
/// queue, started and stopped together.
public final class SyncClient: Sendable {
    public let postbox: Postbox
    public let manager: AccountStateManager
    public let holeFiller: MessageHistoryHoleFiller
    public let outbound: OutboundQueue
    public let accountPeerId: PeerId

    /// What a sync database is created with: every chat starts as one hole; account-wide message ids of users
    /// and groups are indexed (deletes name only the id); text is indexed for search.
    public static var seedConfiguration: SeedConfiguration {
        let cloud = SyncNamespaces.cloudMessages
        let everywhere: [MessageId.Namespace: Set<MessageTags>] = [cloud: []]
        return SeedConfiguration(
            messageHoles: [SyncNamespaces.user: everywhere, SyncNamespaces.group: everywhere,
                           SyncNamespaces.channel: everywhere, SyncNamespaces.secretChat: everywhere],
            defaultMessageNamespaceReadStates: [cloud: .idBased(maxIncomingReadId: 0, maxOutgoingReadId: 0, maxKnownId: 0, count: 0, markedUnread: false)],
            chatMessagesNamespaces: [cloud, SyncNamespaces.localMessages],
            indexMessageText: true,
            globalMessageIdsNamespaces: [
                GlobalMessageIdsNamespace(peerIdNamespace: SyncNamespaces.user, messageIdNamespace: cloud),
                GlobalMessageIdsNamespace(peerIdNamespace: SyncNamespaces.group, messageIdNamespace: cloud),
            ]
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
    }

    /// Opens (or creates) the database at `path` for the account.
    public static func open(path: String, accountPeerId: PeerId, transport: any SyncTransport,
                            configuration: SyncConfiguration = SyncConfiguration(),
                            options: ValueBoxOptions = ValueBoxOptions()) async throws -> SyncClient {
        try registerTypes()
        let postbox = try await Postbox.open(path: path, seedConfiguration: seedConfiguration, options: options)
        return SyncClient(postbox: postbox, transport: transport, accountPeerId: accountPeerId, configuration: configuration)
    }

    /// A client of the account on `postbox`. Every transaction of the sync layer runs on `store`: `postbox`
    /// unless given (a test puts a store in front of it that fails).
    public init(postbox: Postbox, store: (any SyncStore)? = nil, transport: any SyncTransport, accountPeerId: PeerId,
                configuration: SyncConfiguration) {
        self.postbox = postbox
        self.accountPeerId = accountPeerId
        let store = store ?? postbox
        manager = AccountStateManager(store: store, transport: transport, accountPeerId: accountPeerId, configuration: configuration)
        holeFiller = MessageHistoryHoleFiller(postbox: postbox, store: store, manager: manager, transport: transport, configuration: configuration)
        outbound = OutboundQueue(postbox: postbox, store: store, manager: manager, transport: transport)
    }

    /// Starts syncing: difference first, then pushes; hole filling and outbound queues.
    public func start() async {
        await manager.start()
        await holeFiller.start()
        await outbound.start()
    }

    /// Stops every part (requests in flight stop retrying) and closes the database.
    public func stop() async throws {
        await outbound.stop()
        await holeFiller.stop()
        await manager.stop()
        try await postbox.close()
    }

    /// Returns once the state manager is idle and no hole fill or outbound operation is running or waiting,
    /// three checks in a row `interval` apart (work hands off between the parts).
    public func waitUntilQuiet(interval: Duration = .milliseconds(20)) async {
        var quietChecks = 0
        while quietChecks < 3 {
            await manager.waitUntilIdle()
            let fillerBusy = await holeFiller.isBusy
            let outboundBusy = await outbound.isBusy
            let managerIdle = await manager.isIdle
            let busy = fillerBusy || outboundBusy || !managerIdle
            quietChecks = busy ? 0 : quietChecks + 1
            // Throws only when the caller's task is cancelled: the checks go on (they end once all is quiet).
            try? await Task.sleep(for: interval)
        }
    }
}
