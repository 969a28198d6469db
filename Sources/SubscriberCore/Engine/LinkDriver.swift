import Foundation

/// The protocol half of a link: what one transport's messages mean. The engine (``LinkRunner``) owns the socket,
/// the timers and the lifecycle; a driver only turns frames into decisions and says what to send.
///
/// Every method but ``pendingMessages()`` is synchronous and called from the link's tasks (the reader calls
/// ``handleFrame(_:into:)`` for each frame, on the hot path), so a driver keeps its state behind a lock, never behind an
/// actor hop.
package protocol LinkDriver: Sendable {
    /// The messages sent as soon as the socket is open (`connection_init`).
    func handshakeMessages() -> [WebSocketMessage]

    /// A frame before the handshake was acknowledged.
    func handleHandshakeFrame(_ message: WebSocketMessage) -> LinkHandshakeStep

    /// The handshake was acknowledged: the link is open. `control` reaches this link from other tasks (wake its
    /// writer, schedule a protocol timer, close it).
    func linkOpened(_ control: LinkControl)

    /// A frame once the link is open. Events it delivers go to their sinks with `batch`, the reader's: their consumers
    /// are woken when the reader flushes it, after the socket read.
    func handleFrame(_ message: WebSocketMessage, into batch: DeliveryBatch) -> LinkFrameStep

    /// What the link's writer should send now (subscribes, unsubscribes, publishes); called after every wake, by the
    /// writer only (never twice at once for one link).
    ///
    /// It may suspend (AppSync asks the ``AuthSession`` for credentials to authorize what it sends), so it must not
    /// hold the driver's lock across a suspension, and it must return promptly once the calling task is cancelled
    /// (the link's scope is ending), whatever the awaited call does.
    func pendingMessages() async -> [WebSocketMessage]

    /// The protocol's ping, for ``LinkLiveness/protocolPing`` (the fallback where the server ignores WebSocket pings).
    func pingMessage() -> WebSocketMessage?

    /// A timer scheduled with ``LinkControl/schedule(after:token:)`` is due.
    func timerFired(_ token: Int)

    /// The connection reached its rotation lead (only when the runner was given a rotation delay).
    func rotationDue()
}

/// What a frame during the handshake means.
package enum LinkHandshakeStep: Sendable {
    /// Nothing yet; keep waiting for the acknowledgement.
    case pending
    /// Answer with this message and keep waiting (a `ping` before the ack).
    case reply(WebSocketMessage)
    /// Acknowledged, with the protocol's own liveness check (the fallback where WebSocket pings go unanswered).
    case acknowledged(LinkLiveness)
    /// The handshake failed: close with `code` and end the link.
    case fail(LinkEnd, closeCode: UInt16, reason: String)
}

/// What a frame of an open link means.
package enum LinkFrameStep: Sendable {
    /// Handled.
    case handled
    /// Handled, and it was the server's keep-alive (AppSync `ka`): the engine learns the interval.
    case keepAlive
    /// Answer with this message (`pong`).
    case reply(WebSocketMessage)
    /// End the link with a close frame (`code`, `reason`): the server broke the protocol or refused the connection.
    case close(LinkEnd, code: UInt16, reason: String)
}

/// Why a link ended, in the engine's vocabulary; each transport maps it (with the close frame) to its reconnect rule.
package enum LinkEnd: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket could not be opened (`authRejected`: the upgrade was refused for authentication).
    case openFailed(String, authRejected: Bool)
    /// The server closed the connection (or it broke); the close frame is in the report.
    case peerClosed
    /// No acknowledgement in time.
    case ackTimeout(Duration)
    /// Nothing arrived within the keep-alive window.
    case keepAliveTimeout(Duration)
    /// No pong within the timeout after a ping.
    case pongTimeout(Duration)
    /// The server broke the protocol (a malformed frame, a message out of order, invalid UTF-8).
    case protocolViolation(String)
    /// The server refused the credentials during the handshake.
    case authRejected(String)
    /// The server refused the connection for another reason (AppSync `connection_error`).
    case serverError(errorType: String, message: String?)
    /// The client ended it on purpose (disconnect, nothing left to carry).
    case requested
    /// Replaced by a fresh connection (rotation).
    case rotated
    /// The ``AuthSession`` gave no credentials within this long (before the link opened, or for what it had to send).
    case credentialsTimeout(Duration)

    init(_ failure: LinkFailure) {
        switch failure {
        case .ackTimeout(let after): self = .ackTimeout(after)
        case .keepAliveTimeout(let after): self = .keepAliveTimeout(after)
        case .pongTimeout(let after): self = .pongTimeout(after)
        }
    }

    package var description: String {
        switch self {
        case .openFailed(let detail, _): "open failed: \(detail)"
        case .peerClosed: "closed by the server"
        case .ackTimeout(let after): "no acknowledgement within \(after)"
        case .keepAliveTimeout(let after): "keep-alive silence for \(after)"
        case .pongTimeout(let after): "no pong within \(after)"
        case .protocolViolation(let detail): "protocol violation: \(detail)"
        case .authRejected(let detail): "auth rejected: \(detail)"
        case .serverError(let type, let message): "server error \(type)\(message.map { ": \($0)" } ?? "")"
        case .requested: "closed by the client"
        case .rotated: "rotated"
        case .credentialsTimeout(let after): "the AuthSession gave no credentials within \(after)"
        }
    }

    /// The error a subscription or publish that depended on this link sees.
    package func error(close: WebSocketCloseInfo?) -> RealtimeError {
        switch self {
        case .openFailed(let detail, _): .network(detail)
        case .peerClosed: .network("connection closed: \(close.map { "\($0)" } ?? "without a close frame")")
        case .ackTimeout(let after): .connectionTimedOut(after)
        case .keepAliveTimeout(let after), .pongTimeout(let after): .keepAliveTimedOut(after)
        case .protocolViolation(let detail): .protocolViolation(detail)
        case .authRejected(let detail): .sessionExpired(detail)
        case .serverError(let type, let message): .serverError(errorType: type, message: message)
        case .requested, .rotated: .disconnected
        case .credentialsTimeout: .network(description)
        }
    }
}

/// How a link ended, as the supervisor and the transport see it.
package struct LinkReport: Sendable {
    /// Why it ended.
    package var end: LinkEnd
    /// Whether the handshake was acknowledged.
    package var acknowledged: Bool
    /// The wall-clock instant the last frame of any kind arrived; `nil` if none did. A gap starts here (minus the
    /// safety margin): everything after it may be lost, even while the link still looked alive.
    package var lastReceived: Date?
    /// The close frame or transport failure, once the socket is gone.
    package var close: WebSocketCloseInfo?

    package init(end: LinkEnd, acknowledged: Bool = false, lastReceived: Date? = nil, close: WebSocketCloseInfo? = nil) {
        self.end = end
        self.acknowledged = acknowledged
        self.lastReceived = lastReceived
        self.close = close
    }

    /// Where the gap this link's loss opens starts, for both transports: its last frame minus `margin`, or `now` if no
    /// frame ever came.
    package func lossStart(margin: TimeInterval, now: @autoclosure () -> Date) -> Date {
        lastReceived.map { $0.addingTimeInterval(-margin) } ?? now()
    }
}
