import SubscriberCore

/// One WebSocket connection of the transport (there are two during a rotation). Actor-confined state, addressed by
/// generation number so tasks never capture it.
struct AppSyncLink {
    let generation: Int
    let connection: any WebSocketConnection
    let authorizer: AppSyncAuthorizer
    var acked = false
    var keepAlive: KeepAliveWatchdog?
    var ackWaiter: CheckedContinuation<Result<Void, AppSyncLinkEnd>, Never>?
    var endWaiters: [CheckedContinuation<AppSyncLinkEnd, Never>] = []
    var end: AppSyncLinkEnd?
    /// Set before the client closes the link on purpose, so the close is reported as that reason.
    var requestedEnd: AppSyncLinkEnd?
    var tasks: [Task<Void, Never>] = []
}

/// Why a link ended.
enum AppSyncLinkEnd: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket could not be opened.
    case openFailed(String, authRejected: Bool)
    /// The server closed (or the transport broke).
    case closed(WebSocketCloseInfo)
    /// `connection_error` refusing the credentials.
    case authRejected(String)
    /// `connection_error` for another reason.
    case connectionError(AppSyncServerError)
    /// No `connection_ack` in time.
    case ackTimeout(Duration)
    /// No message within the keep-alive window.
    case keepAliveTimeout(Duration)
    /// The client closed it: disconnect, or nothing left to carry.
    case requested
    /// Replaced by a fresh connection at the maximum connection duration.
    case rotated

    var isAuthRejection: Bool {
        switch self {
        case .authRejected, .openFailed(_, authRejected: true): true
        default: false
        }
    }

    /// How the shared reconnect bookkeeping sees this end. AppSync defines no fatal close codes: the service closes
    /// with 1000 even on failure, so every close it did not ask for is worth a reconnect.
    var reconnectEnding: ReconnectBookkeeping.Ending {
        switch self {
        case .requested: .requested
        case _ where isAuthRejection: .authRejected(description)
        default: .retryable
        }
    }

    var error: RealtimeError {
        switch self {
        case .openFailed(let detail, _): .network(detail)
        case .closed(let info): .network("connection closed: \(info)")
        case .authRejected(let detail): .sessionExpired(detail)
        case .connectionError(let error): .serverError(errorType: error.errorType, message: error.message)
        case .ackTimeout(let after): .connectionTimedOut(after)
        case .keepAliveTimeout(let after): .keepAliveTimedOut(after)
        case .requested, .rotated: .disconnected
        }
    }

    var description: String {
        switch self {
        case .openFailed(let detail, _): "open failed: \(detail)"
        case .closed(let info): "closed \(info)"
        case .authRejected(let detail): "auth rejected: \(detail)"
        case .connectionError(let error): "connection_error \(error.errorType)"
        case .ackTimeout(let after): "no connection_ack within \(after)"
        case .keepAliveTimeout(let after): "keep-alive silence for \(after)"
        case .requested: "closed by client"
        case .rotated: "rotated"
        }
    }
}
