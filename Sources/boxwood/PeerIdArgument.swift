import ArgumentParser
import Boxwood

/// A peer id on the command line: `namespace:id` (`2:3001`; namespace 0…7, the id a signed 61-bit number) or
/// the packed Int64 that Postbox tables use as the key (`8589937593`, see ``PeerId/toInt64()``).
struct PeerIdArgument: ExpressibleByArgument, Sendable {
    let peerId: PeerId

    init(_ peerId: PeerId) { self.peerId = peerId }

    init?(argument: String) {
        guard let peerId = PeerIdArgument.parse(argument) else { return nil }
        self.peerId = peerId
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// Parses either form; nil when it is neither (or out of range).
    static func parse(_ text: String) -> PeerId? {
        if let colon = text.firstIndex(of: ":") {
            guard let namespace = Int32(text[..<colon]).flatMap({ PeerId.Namespace(exactly: $0) }),
                  let id = Int64(text[text.index(after: colon)...]).flatMap({ PeerId.Id(exactly: $0) }) else { return nil }
            return PeerId(namespace: namespace, id: id)
        }
        guard let packed = Int64(text) else { return nil }
        return PeerId(packed)
    }
}

/// The help text of a PEERID argument or option.
let peerIdHelp = ArgumentHelp(
    "The chat: namespace:id (e.g. 2:3001; 0 users, 1 groups, 2 channels, 3 secret chats) or the packed Int64 form.",
    valueName: "peer-id")
