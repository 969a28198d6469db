/// How one connection's closing went, shared by the frame handler (event loop) and the connection (any task).
struct WebSocketCloseState: Sendable {
    /// A close frame went out (ours, or the echo of the server's).
    var closeSent = false
    /// This side closed first (``NIOWebSocketConnection/close(code:reason:)`` or the end of the scope).
    var initiatedLocally = false
    /// ``NIOWebSocketConnection/abort()`` dropped the connection.
    var aborted = false
    /// The server's close frame: its code (`nil` when it had none) and reason.
    var received: (code: UInt16?, reason: String)?
    /// The code this side failed the connection with (a protocol violation by the server).
    var failure: UInt16?
}
