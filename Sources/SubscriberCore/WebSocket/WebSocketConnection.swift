/// An open WebSocket connection, as the transports see it.
///
/// The seam between the protocol clients and the socket library. Implementations: ``NIOWebSocketConnector``
/// (swift-websocket `WSClient`, Linux and Apple), `URLSessionWebSocketConnector` (Apple platforms only) and the
/// scripted fake server in `RealtimeTesting`.
///
/// `receive()` has a single consumer (the transport's receive loop); `send` and `close` may be called
/// from anywhere. Control frames (ping/pong) are handled by the implementation and never surface here.
public protocol WebSocketConnection: AnyObject, Sendable {
    /// The subprotocol the server selected, if it selected one.
    var negotiatedSubprotocol: String? { get }

    /// Waits for the next message. Backpressure: the implementation reads no further than one message
    /// ahead of the caller. After `.closed` is returned once, every further call returns it again.
    func receive() async -> WebSocketInboundEvent

    /// Sends a message. Throws ``WebSocketSeamError/notConnected`` after the connection has ended.
    func send(_ message: WebSocketMessage) async throws

    /// Starts the closing handshake with `code` and `reason` (or ends the transport if the handshake cannot run).
    /// Returns once the connection is closed; `receive()` then yields `.closed` with `initiatedLocally == true`.
    func close(code: UInt16, reason: String) async
}

/// Opens WebSocket connections. Transports take one of these so tests can substitute a fake server.
public protocol WebSocketConnector: Sendable {
    /// Opens a connection and returns once the upgrade has completed.
    ///
    /// - Throws: ``WebSocketSeamError`` when the connection or the upgrade fails.
    func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection
}

/// Failures of the WebSocket seam itself (below any protocol).
public enum WebSocketSeamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not a usable `ws://` or `wss://` URL.
    case invalidURL(String)
    /// The TCP/TLS connection could not be made.
    case connectionFailed(String)
    /// The server refused the WebSocket upgrade (for example with an HTTP 401 or 404).
    case upgradeRejected(String)
    /// A send was attempted on a connection that has ended.
    case notConnected

    /// Whether the server refused the upgrade for authentication (HTTP 401 or 403). Only connectors that can read the
    /// upgrade response's status report it (as `upgradeRejected("HTTP <status>…")`); swift-websocket's `WSClient`
    /// cannot, so with ``NIOWebSocketConnector`` a refused upgrade is an ordinary connection failure.
    public var isAuthenticationRejection: Bool {
        guard case .upgradeRejected(let detail) = self else { return false }
        return detail.hasPrefix("HTTP 401") || detail.hasPrefix("HTTP 403")
    }

    public var description: String {
        switch self {
        case .invalidURL(let detail): "invalid WebSocket URL: \(detail)"
        case .connectionFailed(let detail): "WebSocket connection failed: \(detail)"
        case .upgradeRejected(let detail): "WebSocket upgrade rejected: \(detail)"
        case .notConnected: "WebSocket is not connected"
        }
    }
}
