import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Replaces hummingbird-websocket's bare 400 for a refused upgrade with the status and JSON body the route recorded
/// in ``UpgradeRefusals`` (401, 501, 503, …). Sits in the HTTP/1 pipeline of every connection that was not upgraded.
final class UpgradeRefusalRewriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let refusals: UpgradeRefusals

    init(refusals: UpgradeRefusals) { self.refusals = refusals }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), head.status == .badRequest,
            let refusal = refusals.take(for: context.channel)
        else {
            context.write(data, promise: promise)
            return
        }
        let body = context.channel.allocator.buffer(string: refusal.body)
        head.status = refusal.status
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = String(body.readableBytes)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: promise)
    }
}
