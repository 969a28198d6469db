import SubscriberCore

/// What the app learns about the notifier's connection, so it can refetch what it may have missed.
public enum NotifierConnectionEvent: Sendable, Equatable {
    /// The upstream subscription behind `stream` is live on `transport`.
    case live(stream: String, transport: String)
    /// The upstream behind `stream` is live again; events inside `gap` may have been missed.
    case resumed(stream: String, transport: String, gap: GapWindow)
    /// The notifier moved to another transport; events inside `gap` may have been missed.
    case transportSwitched(from: String, to: String, gap: GapWindow, reason: TransportSwitchReason)
    /// The backend refused the credentials even after a refresh: sign in again (then call `update(userId:organizationId:)`).
    case sessionExpired
    /// The transport found the user signed out and stopped.
    case signedOut
    /// An upstream subscription failed for good (the stream keeps its observers; the app decides what to do).
    case streamFailed(stream: String, transport: String, error: RealtimeError)
    /// Events of `stream` were lost while its upstream stayed live (a buffer overflowed, the server reported a
    /// delivery error, or an event could not be read): events inside `loss.window` may have been missed.
    case eventsLost(stream: String, transport: String, loss: LossReport)
    /// The app went to the background and the connection was closed after the grace delay.
    case suspended
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
