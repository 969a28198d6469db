import NIOCore

/// The first handler of a connection's pipeline, in front of TLS: dropping a connection closes the socket from here, so
/// it never waits for TLS's closing handshake.
///
/// A close that starts behind NIOSSL's handler makes it send `close_notify` and keep the socket until the peer answers
/// with its own or NIOSSL's shutdown timeout passes (5 s by default, whatever the connector's close timeout). A
/// blackholed peer never answers, so an abort, or a close timeout that expired, would hold the link that long. The
/// WebSocket closing handshake (or the decision to abort) has already said everything TLS's would.
final class SocketDropHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny

    static let name = "vortex.websocket.socket-drop"

    /// Closes `channel`'s socket at once, from the head of the pipeline; on `ws://` this is an ordinary close.
    static func drop(_ channel: any Channel) {
        channel.eventLoop.execute {
            let pipeline = channel.pipeline.syncOperations
            if let context = try? pipeline.context(name: name) {
                context.close(mode: .all, promise: nil)
            } else {
                channel.close(promise: nil)
            }
        }
    }
}
