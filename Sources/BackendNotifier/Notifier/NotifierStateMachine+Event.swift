import Foundation
import SubscriberCore

extension NotifierStateMachine {
    /// An upstream run: one subscription of one upstream on one transport, from start to stop. Events of a run that
    /// was stopped are recognised by the serial and ignored.
    struct RunID: Hashable, Sendable, CustomStringConvertible {
        let upstream: Upstream
        let serial: Int

        var description: String { "\(upstream.rawValue)#\(serial)" }
    }

    /// A transport as the machine knows it; the shell holds the transport itself under `id`.
    struct TransportRef: Hashable, Sendable {
        let id: Int
        let name: String
        let dialect: TransportDialect
    }

    /// Who is signed in (`userId` `nil`: nobody, no connection at all).
    typealias Identity = NotifierIdentity

    /// The machine's timers; at most one of each kind is armed. A fire carries the token it was armed with, so a fire
    /// that raced with cancelling or re-arming is recognised and ignored.
    enum Timer: Hashable, Sendable {
        /// `enterBackground()` was called: suspend when it fires.
        case backgroundGrace
        /// Waiting for a live connection: report `networkError` when it fires.
        case networkError
        /// A switch waits for the new transport: abandon it when it fires.
        case switchTimeout
        /// Every new subscription of a switch is live: cut over when it fires (the old transport delivers until then).
        case switchSettle
        /// A switch cut over: stop de-duplicating the new transport against what the old one delivered.
        case overlapEnd
    }

    /// What happened: the public API's calls, the pumps' reports, the transport's states, timers and finished
    /// disconnects.
    enum Event: Equatable, Sendable {
        /// An observer subscribed to a stream fed by the upstream.
        case observed(Upstream)
        /// The last observer of every stream fed by the upstream has gone.
        case unobserved(Upstream)
        /// `update(userId:organizationId:)`; `operation` completes when it has taken effect.
        case updateRequested(Identity, operation: Int)
        /// A switch to `target`: `.requested` by the app or an operator, or failover/failback. With
        /// `onlyFromOtherDialect` it does nothing when the active transport already speaks the target's dialect
        /// (how the stack switches to a transport kind without keeping a record of its own).
        case switchRequested(target: TransportRef, reason: TransportSwitchReason, onlyFromOtherDialect: Bool, operation: Int)
        /// `enterBackground()`.
        case enteredBackground
        /// `enterForeground()`.
        case enteredForeground(operation: Int)
        /// The run's subscription is confirmed (``SubscriptionEvent/live``).
        case upstreamLive(RunID)
        /// The run's subscription is live again after its link was lost (``SubscriptionEvent/resumed(gap:)``, which the
        /// pump hands to the app itself): it owes nothing for that outage any more.
        case upstreamResumed(RunID)
        /// The run's stream ended: normally (`nil`) or with an error.
        case upstreamEnded(RunID, RealtimeError?)
        /// The followed transport's connection state, reported with the transport's id, why it last lost or could not
        /// make a connection (``RealtimeTransport/lastConnectionFailure``) and when its outage began
        /// (``RealtimeTransport/connectionLostAt``), both read as the state arrived.
        case transportStateChanged(ConnectionState, transport: Int, lastFailure: String? = nil, lostAt: Date? = nil)
        /// A timer armed with `token` is due.
        case timerFired(Timer, token: Int)
        /// The disconnect started with `token` has finished.
        case disconnected(token: Int)
        /// The notifier is shutting down: everything stops, waiting operations return, no event changes anything
        /// afterwards.
        case shutdown
    }
}
