import HTTPTypes
import NIOCore
import SubscriberCore

/// Refusals decided for upgrade requests, waiting for ``UpgradeRefusalRewriter`` to write them.
///
/// hummingbird-websocket answers every refused upgrade with a bare 400; a route that refuses records the status and
/// body it wants here, keyed by the connection, and the rewriter replaces that 400 on the way out.
final class UpgradeRefusals: Sendable {
    struct Refusal: Sendable {
        var status: HTTPResponse.Status
        var body: String
    }

    private let pending = Locked<[ObjectIdentifier: Refusal]>([:])

    func record(_ refusal: Refusal, for channel: any Channel) {
        let key = ObjectIdentifier(channel)
        pending.withLock { $0[key] = refusal }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.pending.withLock { $0.removeValue(forKey: key) }
        }
    }

    func take(for channel: any Channel) -> Refusal? {
        let key = ObjectIdentifier(channel)
        return pending.withLock { $0.removeValue(forKey: key) }
    }
}
