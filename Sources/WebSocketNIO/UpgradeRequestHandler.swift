import NIOCore
import NIOHTTP1
import SubscriberCore

/// Sends the HTTP upgrade request once the socket is up and reports what becomes of it: a refusal (any answer but
/// 101 Switching Protocols, which NIO's upgrade handler consumes itself), or the connection failing or ending first.
/// Removed from the pipeline when the upgrade succeeds.
final class UpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let opened: OneShotSignal<Result<String?, any Error>>

    /// - Parameter opened: fired with the failure; the upgrade itself fires it with the negotiated subprotocol.
    init(head: HTTPRequestHead, opened: OneShotSignal<Result<String?, any Error>>) {
        self.head = head
        self.opened = opened
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let response) = unwrapInboundIn(data) else { return }
        opened.fire(
            .failure(WebSocketSeamError.upgradeRejected("HTTP \(response.status.code) \(response.status.reasonPhrase)"))
        )
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let failure: WebSocketSeamError =
            switch error {
            case let upgrade as NIOHTTPClientUpgradeError: .upgradeRejected("invalid upgrade response: \(upgrade)")
            default: .connectionFailed("\(error)")
            }
        opened.fire(.failure(failure))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        opened.fire(.failure(WebSocketSeamError.connectionFailed("the connection ended during the upgrade")))
        context.fireChannelInactive()
    }
}
