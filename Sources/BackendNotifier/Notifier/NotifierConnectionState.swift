import SubscriberCore

/// The notifier's connection as an app shows it (for example an "offline" banner), following whichever transport is
/// active: after a switch it reports the new transport's connection.
public enum NotifierConnectionState: String, Sendable, Equatable, CaseIterable {
    /// Opening the connection (the first time, or after an identity change, a switch or returning to the foreground).
    case connecting
    /// Connected: subscriptions are live or becoming live.
    case live
    /// The connection was lost and the transport is waiting to try again.
    case reconnecting
    /// No connection and none being attempted: signed out, the session expired, the transport gave up, or nothing
    /// is observed.
    case offline
    /// The app is in the background and the connection was closed after the grace delay.
    case suspended

    /// The notifier state for a transport state. `upstreamsRunning` tells an idle transport that is about to connect
    /// (something is subscribed) from one with nothing to do.
    init(_ state: ConnectionState, upstreamsRunning: Bool) {
        switch state {
        case .connecting: self = .connecting
        case .connected: self = .live
        case .reconnecting: self = .reconnecting
        case .disconnected: self = .offline
        case .idle: self = upstreamsRunning ? .connecting : .offline
        }
    }
}
