/// Every failure a transport reports, with readable descriptions.
///
/// The mapping from server messages and close codes to these cases is documented in `docs/architecture.md`.
public enum RealtimeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server rejected the credentials again after a refresh; the user must sign in again.
    case sessionExpired(String)
    /// The user is signed out, so the transport will not (re)connect.
    case signedOut
    /// The socket could not be opened or broke.
    case network(String)
    /// The server did not acknowledge the connection in time.
    case connectionTimedOut(Duration)
    /// Nothing arrived within the keep-alive window: the connection was presumed dead.
    case keepAliveTimedOut(Duration)
    /// The server refused this subscription; sibling subscriptions are unaffected.
    case subscriptionRejected(errorType: String, message: String?)
    /// The server refused a publish as a whole.
    case publishRejected(errorType: String, message: String?)
    /// The channel name breaks the AppSync Events naming rules.
    case invalidChannel(String, reason: String)
    /// A publish request breaks the limits (event count, size, wildcard).
    case invalidPublish(String)
    /// The endpoint URL is unusable.
    case invalidEndpoint(String)
    /// The connection already carries the most subscriptions the service allows.
    case subscriptionLimitReached(Int)
    /// The server sent something the protocol does not allow.
    case protocolViolation(String)
    /// The server closed with a code the protocol treats as fatal.
    case closedByServer(code: UInt16, reason: String)
    /// The server reported an error for this subscription's events or the connection.
    case serverError(errorType: String, message: String?)
    /// A GraphQL operation ended with errors (`error` message).
    case graphQLErrors(String)
    /// The reconnect policy gave up.
    case reconnectAttemptsExhausted(Int)
    /// The transport cannot do this (for example publishing over GraphQL).
    case unsupported(String)
    /// The transport was disconnected before the operation finished.
    case disconnected

    public var description: String {
        switch self {
        case .sessionExpired(let detail): "session expired: \(detail)"
        case .signedOut: "signed out"
        case .network(let detail): "network error: \(detail)"
        case .connectionTimedOut(let after): "connection not acknowledged within \(after)"
        case .keepAliveTimedOut(let after): "no keep-alive within \(after); connection presumed dead"
        case .subscriptionRejected(let type, let message): "subscription rejected: \(type)\(message.map { ": \($0)" } ?? "")"
        case .publishRejected(let type, let message): "publish rejected: \(type)\(message.map { ": \($0)" } ?? "")"
        case .invalidChannel(let channel, let reason): "invalid channel \"\(channel)\": \(reason)"
        case .invalidPublish(let reason): "invalid publish: \(reason)"
        case .invalidEndpoint(let reason): "invalid endpoint: \(reason)"
        case .subscriptionLimitReached(let limit): "subscription limit reached: at most \(limit) per connection"
        case .protocolViolation(let detail): "protocol violation: \(detail)"
        case .closedByServer(let code, let reason): "closed by server with \(code)\(reason.isEmpty ? "" : " \(reason)")"
        case .serverError(let type, let message): "server error: \(type)\(message.map { ": \($0)" } ?? "")"
        case .graphQLErrors(let json): "GraphQL errors: \(json)"
        case .reconnectAttemptsExhausted(let attempts): "gave up reconnecting after \(attempts) attempts"
        case .unsupported(let detail): "unsupported: \(detail)"
        case .disconnected: "disconnected"
        }
    }
}
