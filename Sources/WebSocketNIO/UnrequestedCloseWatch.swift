import NIOCore
import NIOWebSocket
import SubscriberCore
import WSClient

/// A WebSocket extension that passes every frame through unchanged and reports a close frame WSClient writes without
/// the scope having asked for one.
///
/// WSClient 1.6 fails a connection on a frame with RSV bits set or a reserved opcode by sending close 1002, but it
/// keeps reading and delivering frames and starts no close timeout: a server that ignores that close and keeps the
/// link busy would hold it half-closed for ever. Extensions see every frame WSClient sends, its own closes included,
/// so this is where the connector learns of them. Code 1000 is not reported: WSClient sends it to echo a well-formed
/// close from the server and when the scope's body returns, and never to fail a connection.
struct UnrequestedCloseWatch: WebSocketExtension {
    let name = "vortex-unrequested-close-watch"
    /// Set when the scope closes or aborts the connection itself.
    let closedLocally: Locked<Bool>
    /// Fired with the close code WSClient sent (1005 when it sent none).
    let unrequestedClose: OneShotSignal<UInt16>

    func processReceivedFrame(_ frame: WebSocketFrame, context: WebSocketExtensionContext) async throws -> WebSocketFrame {
        frame
    }

    func processFrameToSend(_ frame: WebSocketFrame, context: WebSocketExtensionContext) async throws -> WebSocketFrame {
        if frame.opcode == .connectionClose, !closedLocally.withLock({ $0 }) {
            // Extensions run before WSClient masks the frame, so the payload is plain.
            let code = frame.data.getInteger(at: frame.data.readerIndex, as: UInt16.self) ?? 1005
            if code != 1000 { unrequestedClose.fire(code) }
        }
        return frame
    }

    func shutdown() async {}
}
