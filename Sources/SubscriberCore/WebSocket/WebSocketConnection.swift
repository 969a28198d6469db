/// An open WebSocket connection, as a link's scope sees it. It exists only inside
/// ``WebSocketConnector/withConnection(_:_:)``: the connection lives exactly as long as that closure.
///
/// `receive()` has a single consumer (the link's reader); `send`, `close`, `abort` and `sendPing()` may be called from
/// any task of the scope. Control frames never surface as messages: the implementation answers the server's pings, and
/// the link's own pings go out with ``sendPing()``, their pongs reported to the handler set with ``onPong(_:)`` (on
/// the implementation's thread, without waking the reader).
public protocol WebSocketConnection: Sendable {
    /// The subprotocol the server selected, if the implementation can tell.
    var negotiatedSubprotocol: String? { get }

    /// The next complete message, or `nil` once the peer closed, the connection broke, ``close(code:reason:)`` or
    /// ``abort()`` ended reading. Reads nothing from the socket before it is called (backpressure).
    ///
    /// - Throws: when the peer broke the WebSocket protocol (for example a text frame that is not UTF-8). The
    ///   connection is over either way.
    func receive() async throws -> WebSocketMessage?

    /// Every complete message that has arrived, in order, waiting for at least one: a read's worth at a time, so the
    /// reader handles them in one go and wakes its consumers once. `nil` when ``receive()`` would return `nil`.
    ///
    /// The default implementation returns one message per call; connectors that read in batches override it.
    func receiveBatch() async throws -> [WebSocketMessage]?

    /// Sends a message. Throws ``WebSocketSeamError/notConnected`` once the connection is closing or has ended, and
    /// `CancellationError` when the calling task is cancelled before the message was written (a peer that stopped
    /// reading must not hold a link's end).
    func send(_ message: WebSocketMessage) async throws

    /// Sends a close frame with `code` and `reason`. The handshake completes when the scope's closure returns,
    /// waiting at most the connector's close timeout for the peer's answer.
    func close(code: UInt16, reason: String) async

    /// Drops the connection now, without a closing handshake: the link is known to be dead, and waiting for the
    /// peer would only delay the reconnect. A pending `receive()` returns `nil` promptly.
    func abort()

    /// Sends a WebSocket ping (an RFC 6455 control frame) and returns at once; its pong reaches the handler set with
    /// ``onPong(_:)``. Returns `false` when this connection cannot send pings: the link then relies on its protocol's
    /// own liveness check. A ping that cannot be delivered (the connection is closing or broken) simply gets no pong.
    ///
    /// The default implementation sends nothing and returns `false`, so a connector written before pings joined the
    /// seam keeps working (its links use the protocol's check: AppSync's `ka` watchdog, graphql-transport-ws pings).
    func sendPing() -> Bool

    /// Sets the handler called for every pong that arrives, solicited or not, replacing any earlier one. It runs on
    /// the implementation's own thread (an event loop, a delegate queue): it must be short and must not block.
    ///
    /// The default implementation never calls it.
    func onPong(_ handler: @escaping @Sendable () -> Void)

    /// The connection's own thread, if it has one, for the link to run on and sleep on (see ``LinkExecutor``).
    ///
    /// The default implementation offers none (`nil`): the link runs on the global executor.
    var linkExecutor: (any LinkExecutor)? { get }
}

extension WebSocketConnection {
    /// One message per call (see ``WebSocketConnection/receiveBatch()``).
    public func receiveBatch() async throws -> [WebSocketMessage]? {
        try await receive().map { [$0] }
    }

    /// No pings: returns `false` (see ``WebSocketConnection/sendPing()``).
    public func sendPing() -> Bool { false }

    /// No pongs are reported (see ``WebSocketConnection/onPong(_:)``).
    public func onPong(_ handler: @escaping @Sendable () -> Void) {}

    /// No thread of its own: `nil` (see ``WebSocketConnection/linkExecutor``).
    public var linkExecutor: (any LinkExecutor)? { nil }
}

/// Opens WebSocket connections. Transports take one of these so tests can substitute a fake server.
///
/// Implementations: `NIOWebSocketConnector` (module `WebSocketNIO`: SwiftNIO, Linux and Apple),
/// `URLSessionWebSocketConnector` (module `WebSocketURLSession`: Apple platforms) and the scripted fake server in
/// `RealtimeTesting`; a third-party connector conforms the same way.
public protocol WebSocketConnector: Sendable {
    /// Opens a connection, runs `body` with it, and ends the connection when `body` returns or throws.
    ///
    /// After `body` returns, a closing handshake (started by `body` or, if it did not, with 1000) waits at most the
    /// connector's close timeout for the peer; after ``WebSocketConnection/abort()`` nothing is awaited.
    ///
    /// - Returns: what `body` returned, and how the connection ended.
    /// - Throws: ``WebSocketSeamError`` when the connection or the upgrade fails (then `body` never runs), or what
    ///   `body` threw, or `CancellationError`. (`body` is escaping only so an implementation may run it on a task it
    ///   owns; it never outlives the call.)
    func withConnection<Value: Sendable>(
        _ request: WebSocketRequest,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value>
}

/// What ``WebSocketConnector/withConnection(_:_:)`` returns: the closure's value and how the connection ended.
public struct WebSocketScopeResult<Value: Sendable>: Sendable {
    /// What the closure returned.
    public var value: Value
    /// How the connection ended (the peer's close frame, a local close, an abort or a transport failure).
    public var close: WebSocketCloseInfo

    /// Creates a result.
    public init(value: Value, close: WebSocketCloseInfo) {
        self.value = value
        self.close = close
    }
}

/// Failures of the WebSocket seam itself (below any protocol).
public enum WebSocketSeamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not a usable `ws://` or `wss://` URL.
    case invalidURL(String)
    /// The TCP/TLS connection could not be made.
    case connectionFailed(String)
    /// The server refused the WebSocket upgrade (for example with an HTTP 401 or 404).
    case upgradeRejected(String)
    /// A send was attempted on a connection that is closing or has ended.
    case notConnected
    /// This connector cannot open connections on this platform.
    case unsupportedPlatform(String)
    /// The server accepted the upgrade but did not select the subprotocol the transport needs
    /// (``WebSocketRequest/requiredSubprotocol``): `selected` is what it selected, `nil` for none.
    case subprotocolNotSelected(required: String, selected: String?)

    /// Whether the server refused the upgrade for authentication (HTTP 401 or 403). Connectors report the upgrade
    /// response's status as `upgradeRejected("HTTP <status>…")`.
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
        case .unsupportedPlatform(let detail): "WebSocket connections are unsupported on this platform: \(detail)"
        case .subprotocolNotSelected(let required, let selected?):
            "WebSocket subprotocol mismatch: the server selected \"\(selected)\", the transport needs \"\(required)\""
        case .subprotocolNotSelected(let required, nil):
            "WebSocket subprotocol mismatch: the server selected none, the transport needs \"\(required)\""
        }
    }
}
