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
        let operation = newOperation()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters[operation] = .plain(continuation)
            receive(.updateRequested(NotifierStateMachine.Identity(userId: userId, organizationId: organizationId), operation: operation))
        }
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
        let operation = newOperation()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters[operation] = .plain(continuation)
            receive(.enteredForeground(operation: operation))
        }
    }

    /// Whether the background grace delay has passed and the connection is closed.
    public var isSuspended: Bool { machine.suspendedAt != nil }

    // MARK: Switching transports

    /// Moves every observed stream to `newTransport` without ending any observer's stream (apps switch with
    /// `RealtimeStack.switchTransport(to:)`, the one public way, which keeps no record of its own).
    ///
    /// Make-before-break: the new transport subscribes every observed upstream while the old one keeps delivering;
    /// once every new subscription is live (AppSync: `subscribe_success`; GraphQL: the first `next`, or
    /// `liveConfirmationWindow` without an error) and the old one has delivered for 500 ms more (what was on its way
    /// over the old link), the old runs stop and the new ones deliver what they received meanwhile, minus what the old
    /// transport already delivered (`EventIdentity`), in one step; then the old transport is disconnected. A `.requested` switch over a live old transport therefore reports an empty window
    /// (``NotifierConnectionEvent/transportSwitched(from:to:gap:reason:)`` with `gap.duration == 0`: nothing may be
    /// missing); failover and failback report the transports' gap rule window (from `gapSafetyMargin` before the
    /// switch began to its end). The connection state, metrics and events follow the new transport from the cut-over
    /// on. Runs one at a time with identity updates, other switches, suspension and resumption.
    ///
    /// - Parameter onlyFromOtherDialect: do nothing when the active transport already speaks `newTransport`'s dialect
    ///   (decided when the switch's turn comes, so concurrent switches to the same kind switch once).
    /// - Throws: when the new transport does not get every stream live within
    ///   ``NotifierConfiguration/switchTimeout``, or one of its subscriptions fails; the old transport then stays in
    ///   use.
    package func switchTransport(
        to newTransport: any RealtimeTransport, because reason: TransportSwitchReason = .requested, onlyFromOtherDialect: Bool = false
    ) async throws {
        let operation = newOperation()
        let id = nextTransportID
        nextTransportID += 1
        transports[id] = newTransport
        let target = NotifierStateMachine.TransportRef(id: id, name: newTransport.name, dialect: newTransport.dialect)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiters[operation] = .throwing(continuation)
            receive(.switchRequested(target: target, reason: reason, onlyFromOtherDialect: onlyFromOtherDialect, operation: operation))
        }
    }

    /// A subscription that proves a transport can serve this user (the role stream's), for health probes.
    package func healthProbeRequest(for dialect: TransportDialect) -> SubscriptionRequest? {
        Upstream.role.request(
            dialect: dialect, userId: machine.identity.userId, organizationId: machine.identity.organizationId,
            namespace: configuration.channelNamespace, operations: configuration.graphQLOperations)
    }

    // MARK: Shutdown

    /// Stops everything for good: every upstream, every timer, the operations waiting (a switch throws
    /// `RealtimeError.disconnected`), and disconnects the transports. Every observer's stream ends, and streams asked
    /// for afterwards end at once. What `RealtimeStack.shutdown()` does to the notifier; releasing the notifier does
    /// the same, without waiting for the disconnects.
    package func shutdown() async {
        var disconnecting: [any RealtimeTransport] = []
        for action in machine.handle(.shutdown, now: wallClock.now()) {
            if case .disconnect(let id, _) = action {
                if let transport = transports[id] { disconnecting.append(transport) }
            } else {
                perform(action)
            }
        }
        hubs.finishAll()
        events.finish()
        states.finish()
        for transport in disconnecting { await transport.disconnect() }
        scope.close()
    }
}
