import Foundation
import Logging
import SubscriberCore

extension BackendNotifier {
    // MARK: Identity

    /// Sign-in, sign-out, a switch of organization, or signing in again after `sessionExpired` / `signedOut`: stops
    /// every upstream, disconnects, and (when signed in) resubscribes everything observed with the new identity.
    /// Observers keep their streams.
    ///
    /// With an unchanged identity it does nothing, unless an observed upstream is not running (after
    /// `sessionExpired`, `signedOut` or a failed stream): then it restarts every observed upstream. The new identity
    /// is in place before anything suspends, and identity updates, switches, suspension and resumption run one at a
    /// time, so no upstream ever subscribes with another identity than the current one.
    public func update(userId: String?, organizationId: String?) async {
        let identity = NotifierIdentity(userId: userId, organizationId: organizationId)
        identities.update(identity)
        // Only a switch can fail; an update always completes.
        try? await run { .updateRequested(identity, operation: $0) }
    }

    // MARK: App lifecycle

    /// The app went to the background: after ``NotifierConfiguration/backgroundGrace`` the connection closes
    /// (a quick app switch keeps it). Wire this to the platform's lifecycle notification.
    public func enterBackground() {
        receive(.enteredBackground)
    }

    /// The app is in the foreground again. After a suspension it reconnects at once and resubscribes, and each stream
    /// reports `resumed` with the window it was suspended; when the connection was kept, it asks the transport to
    /// check it at once (a link the platform froze in the background is found and replaced now, not after a
    /// keep-alive timeout).
    public func enterForeground() async {
        // A resumption always completes.
        try? await run { .enteredForeground(operation: $0) }
    }

    /// Whether the background grace delay has passed and the connection is closed.
    public var isSuspended: Bool { machine.suspendedAt != nil }

    // MARK: Switching transports

    /// Moves every observed stream to `newTransport` without ending any observer's stream (apps switch with
    /// `RealtimeStack.switchTransport(to:)`, the one public way, which keeps no record of its own).
    ///
    /// Make-before-break, as `NotifierStateMachine` describes: the old transport delivers until every new
    /// subscription is live and ``NotifierConfiguration/switchSettle`` has passed, then the new runs deliver what they
    /// held minus what the old one delivered (`EventIdentity`). A `.requested` switch over a live old transport reports
    /// an empty window; failover and failback report the gap rule's window. Runs one at a time with identity updates,
    /// other switches, suspension and resumption.
    ///
    /// - Parameter onlyFromOtherDialect: do nothing when the active transport already speaks `newTransport`'s dialect
    ///   (decided when the switch's turn comes, so concurrent switches to the same kind switch once).
    /// - Throws: when the new transport does not get every stream live within
    ///   ``NotifierConfiguration/switchTimeout``, or one of its subscriptions fails; the old transport then stays in
    ///   use.
    package func switchTransport(
        to newTransport: any RealtimeTransport, because reason: TransportSwitchReason = .requested, onlyFromOtherDialect: Bool = false
    ) async throws {
        let target = transports.add(newTransport)
        try await run { .switchRequested(target: target, reason: reason, onlyFromOtherDialect: onlyFromOtherDialect, operation: $0) }
    }

    /// A subscription that proves a transport can serve `identity` (its role stream's), for health probes; `nil` when
    /// signed out.
    package nonisolated func healthProbeRequest(for dialect: TransportDialect, identity: NotifierIdentity) -> SubscriptionRequest? {
        Upstream.role.request(
            dialect: dialect, userId: identity.userId, organizationId: identity.organizationId,
            namespace: configuration.channelNamespace, operations: configuration.graphQLOperations)
    }

    // MARK: Shutdown

    /// Stops everything for good: every upstream, every timer, the operations waiting (a switch throws
    /// `RealtimeError.disconnected`), and disconnects the transports. Every observer's stream ends, and streams asked
    /// for afterwards end at once. What `RealtimeStack.shutdown()` does to the notifier; releasing the notifier does
    /// the same, without waiting for the disconnects.
    package func shutdown() async {
        let actions = machine.handle(.shutdown, now: wallClock.now())
        // Every action but the disconnects, which shutdown waits for itself.
        perform(actions.filter { if case .disconnect = $0 { false } else { true } })
        hubs.finishAll()
        events.finish()
        states.finish()
        identities.finish()
        upstreamsAllowed.update(false)
        upstreamsAllowed.finish()
        for case .disconnect(let id, _) in actions { await transports[id]?.disconnect() }
        scope.close()
    }
}
