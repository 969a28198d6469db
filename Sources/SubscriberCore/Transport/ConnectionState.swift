/// The state of a transport's connection, as reported by ``RealtimeTransport/connectionStates()``.
public enum ConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// No connection and none wanted (nothing subscribed yet, or after the last subscription ended).
    case idle
    /// Opening the socket and waiting for the protocol's acknowledgement.
    case connecting
    /// Acknowledged: subscriptions can be live.
    case connected
    /// The connection was lost; the next attempt (1-based) starts after `delay`.
    case reconnecting(attempt: Int, delay: Duration)
    /// Stopped for good until the app acts: see the reason.
    case disconnected(DisconnectReason)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .connected: "connected"
        case .reconnecting(let attempt, let delay): "reconnecting(attempt: \(attempt), delay: \(delay))"
        case .disconnected(let reason): "disconnected(\(reason))"
        }
    }
}

/// Why a transport stopped connecting.
public enum DisconnectReason: Sendable, Equatable, CustomStringConvertible {
    /// The app called `disconnect()`.
    case requested
    /// ``AuthSession/isSignedIn()`` returned false before a reconnect.
    case signedOut
    /// Authentication kept failing with fresh credentials.
    case sessionExpired
    /// The server closed with a code the protocol defines as fatal, or the reconnect policy gave up.
    case failed(RealtimeError)

    public var description: String {
        switch self {
        case .requested: "requested"
        case .signedOut: "signed out"
        case .sessionExpired: "session expired"
        case .failed(let error): "failed: \(error)"
        }
    }
}
