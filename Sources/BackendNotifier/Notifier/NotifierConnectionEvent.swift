import SubscriberCore

/// What the app learns about the notifier's connection, so it can refetch what it may have missed.
public enum NotifierConnectionEvent: Sendable, Equatable {
    /// The upstream subscription behind `stream` is live on `transport`.
    case live(stream: String, transport: String)
    /// The upstream behind `stream` is live again; events inside `gap` may have been missed.
    case resumed(stream: String, transport: String, gap: GapWindow)
    /// The notifier moved to another transport; events inside `gap` may have been missed. An empty `gap` (start = end,
    /// `duration == 0`) means nothing may be missing: a `.requested` switch is make-before-break and reports one when
    /// the old transport was live throughout. Failover and failback report the gap rule's window.
    case transportSwitched(from: String, to: String, gap: GapWindow, reason: TransportSwitchReason)
    /// The backend refused the credentials even after a refresh: sign in again, then call
    /// `update(userId:organizationId:)` (same or another identity) to restart every observed stream. Reported once per
    /// episode, however many streams ended.
    case sessionExpired
    /// The transport found the user signed out and stopped (once per episode; `update(userId:organizationId:)` after
    /// signing in again restarts every observed stream).
    case signedOut
    /// The connection could not be kept: the reconnect policy gave up, or the notifier has been offline for longer than
    /// ``NotifierConfiguration/networkErrorAfter``. Reported once per offline episode.
    case networkError(String)
    /// An upstream subscription failed for good, or ended without an error (GraphQL's `complete`: `error` is then
    /// `serverError` with type `SubscriptionEnded`). No more events come for `stream`; it keeps its observers, and
    /// `update(userId:organizationId:)` with the same identity restarts it.
    case streamFailed(stream: String, transport: String, error: RealtimeError)
    /// Events of `stream` were lost while its upstream stayed live (a buffer overflowed, the server reported a
    /// delivery error, or an event could not be read): events inside `loss.window` may have been missed.
    case eventsLost(stream: String, transport: String, loss: LossReport)
    /// The app went to the background and the connection was closed after the grace delay.
    case suspended
}

extension NotifierConnectionEvent {
    /// The event in the seed documents' error vocabulary, or `nil` when it is not a failure.
    public var vortexError: VortexError? {
        switch self {
        case .sessionExpired: .sessionExpired
        case .networkError(let detail): .networkError(detail)
        case .streamFailed(_, _, let error): VortexError(error)
        default: nil
        }
    }
}

/// Why the notifier changed transports.
public enum TransportSwitchReason: Sendable, Equatable {
    /// The app (or an operator's configuration flag) asked: the rollback path.
    case requested
    /// Automatic failover: the active transport could not stay connected.
    case failover(String)
    /// Automatic failback: the preferred transport has been healthy long enough.
    case failback
}
