import NIOCore

/// Passes the end of the connection on one turn of the loop later, so an upgrade under way finishes first.
///
/// A server may send its 101, a message, a close frame and the end of the TCP connection back to back, and the client
/// may read the end in the same turn of the loop as the 101. NIO finishes the upgrade on the next turn: its HTTP decoder
/// leaves the pipeline then, handing on the frames behind the 101. Passed on at once, the end would reach the HTTP
/// decoder while it still holds those frames (and read them as HTTP), and the upgrade handler before the WebSocket
/// handlers exist, so the connection would fail with "ended during the upgrade" and the server's answer (an
/// authentication refusal, say) would be lost. One turn later the upgrade is done, the frames are read, and the end
/// reaches the WebSocket handler. It sits in front of the HTTP handlers (behind TLS) for the connection's life.
final class DeferredInactiveHandler: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func channelInactive(context: ChannelHandlerContext) {
        context.eventLoop.assumeIsolated().execute { context.fireChannelInactive() }
    }
}
