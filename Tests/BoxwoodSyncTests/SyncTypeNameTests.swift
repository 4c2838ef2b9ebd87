import Boxwood
import BoxwoodSync
import Testing

/// The sync layer's stored types keep the names their data was written with.
@Suite struct SyncTypeNameTests {
    @Test func storedTypesKeepTheNamesTheirDataWasWrittenWith() throws {
        // Before postboxTypeName was required it defaulted to `String(describing:)`; stored data uses those hashes.
        let types: [any PostboxCoding.Type] = [
            SyncUser.self, SyncChat.self, SyncUserPresence.self, SyncNotificationSettings.self, SyncMessageAttribute.self,
            SyncAccountState.self, SyncClientIdentity.self, SyncStoredAnswers.self, SendMessageOperation.self,
            SynchronizeReadStateOperation.self,
        ]
        for type in types {
            #expect(type.postboxTypeName == String(describing: type))
        }
        try SyncClient.registerTypes()
        try SyncClient.registerTypes()   // registering again is allowed
    }
}
