import HTTPTypes
import HummingbirdWebSocket

/// What a WebSocket route decides for one upgrade request.
enum WebSocketUpgradeDecision: Sendable {
    /// Upgrade, adding `headers` to the 101 response (for example the selected `Sec-WebSocket-Protocol`), and run
    /// `handler` on the socket.
    case upgrade(HTTPFields, WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>)
    /// Answer with `status` and a JSON `body` instead of upgrading.
    case refuse(HTTPResponse.Status, body: String)
}
