import SubscriberCore

/// The error vocabulary of the seed documents, for apps that map connection problems to their own error handling:
/// authentication failures are ``sessionExpired``, connection failures ``networkError(_:)``, and everything else
/// (for example a subscription the server refused) ``error(_:)`` with a descriptive message.
///
/// Read it from a connection event with ``NotifierConnectionEvent/vortexError``.
public enum VortexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The backend refused the credentials even after a refresh: sign in again, then call
    /// `update(userId:organizationId:)`.
    case sessionExpired
    /// The connection could not be kept: the reconnect policy gave up, or the notifier has been offline longer than
    /// ``NotifierConfiguration/networkErrorAfter``. The transport keeps trying unless the policy gave up.
    case networkError(String)
    /// Any other failure, with a descriptive message (for example a subscription the server refused).
    case error(String)

    /// Maps a transport error to the vocabulary.
    public init(_ error: RealtimeError) {
        switch error {
        case .sessionExpired: self = .sessionExpired
        case .network, .connectionTimedOut, .keepAliveTimedOut, .reconnectAttemptsExhausted, .disconnected:
            self = .networkError(error.description)
        default: self = .error(error.description)
        }
    }

    public var description: String {
        switch self {
        case .sessionExpired: "session expired"
        case .networkError(let detail): "network error: \(detail)"
        case .error(let message): "error: \(message)"
        }
    }
}
