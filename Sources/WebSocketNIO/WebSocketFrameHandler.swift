import Foundation
import NIOCore
import NIOWebSocket
import SubscriberCore

/// The client side of RFC 6455 after the upgrade, on the channel's event loop: reassembles fragments, validates text,
/// answers pings (only the latest while the socket takes no writes), reports pongs (to the link's handler, on the
/// event loop: no task is woken), takes part in the closing handshake and fails the connection on a protocol violation
/// (a masked frame among them). Complete
/// messages go to the ``WebSocketInbound`` one read at a time (at `channelReadComplete`), so the reader handles a
/// read's frames in one go.
final class WebSocketFrameHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let inbound: WebSocketInbound
    private let closeState: Locked<WebSocketCloseState>
    private let pongHandler: Locked<(@Sendable () -> Void)?>
    private let maxMessageSize: Int
    private var pending: [WebSocketMessage] = []
    private var fragments: (opcode: WebSocketOpcode, data: ByteBuffer)?
    /// The latest ping's payload while the socket takes no writes: its pong goes out once it does. RFC 6455 §5.5.3 lets
    /// a client answer only the most recent ping, and a server flooding pings without reading the pongs would
    /// otherwise grow NIO's send queue without bound.
    private var heldPong: ByteBuffer?
    /// Reading is over: the server closed, or this side failed the connection.
    private var done = false

    init(
        inbound: WebSocketInbound, closeState: Locked<WebSocketCloseState>, pongHandler: Locked<(@Sendable () -> Void)?>,
        maxMessageSize: Int
    ) {
        self.inbound = inbound
        self.closeState = closeState
        self.pongHandler = pongHandler
        self.maxMessageSize = maxMessageSize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        let frame = unwrapInboundIn(data)
        // No extension is negotiated, so no reserved bit may be set.
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return fail(context, .protocolError) }
        // RFC 6455 §5.1: a server never masks. NIO's decoder accepts (and unmasks) masked frames, so the check is ours.
        guard frame.maskKey == nil else { return fail(context, .protocolError) }
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else { return fail(context, .protocolError) }
            if frame.fin {
                complete(context, frame.opcode, frame.unmaskedData)
            } else {
                guard frame.length <= maxMessageSize else { return fail(context, .messageTooLarge) }
                fragments = (frame.opcode, frame.unmaskedData)
            }
        case .continuation:
            guard var message = fragments else { return fail(context, .protocolError) }
            var data = frame.unmaskedData
            guard message.data.readableBytes + data.readableBytes <= maxMessageSize else { return fail(context, .messageTooLarge) }
            message.data.writeBuffer(&data)
            fragments = frame.fin ? nil : message
            if frame.fin { complete(context, message.opcode, message.data) }
        case .ping:
            guard context.channel.isWritable else {
                heldPong = frame.unmaskedData
                return
            }
            write(context, WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
        case .pong:
            pongHandler.withLock { $0 }?()
        case .connectionClose:
            receivedClose(context, frame)
        default:
            fail(context, .protocolError)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        deliverPending(context)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !done, context.channel.isWritable, let payload = heldPong {
            heldPong = nil
            write(context, WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: payload))
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deliverPending(context)
        done = true
        inbound.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case NIOWebSocketError.invalidFrameLength:
            fail(context, .messageTooLarge)
        case NIOWebSocketError.fragmentedControlFrame, NIOWebSocketError.multiByteControlFrameLength:
            fail(context, .protocolError)
        default:
            // TLS or socket failure: the connection is gone.
            deliverPending(context)
            done = true
            inbound.finish()
            context.close(promise: nil)
        }
    }

    private func complete(_ context: ChannelHandlerContext, _ opcode: WebSocketOpcode, _ data: ByteBuffer) {
        if opcode == .binary {
            pending.append(.binary(Data(data.readableBytesView)))
            return
        }
        guard let text = Self.validatedText(data) else { return fail(context, .dataInconsistentWithMessage) }
        pending.append(.text(text))
    }

    private func deliverPending(_ context: ChannelHandlerContext) {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        if inbound.append(batch) { context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in } }
    }

    /// The server's close frame: recorded, echoed unless this side closed first, and reading ends. The server then
    /// drops the TCP connection; the scope waits at most its close timeout for that.
    private func receivedClose(_ context: ChannelHandlerContext, _ frame: WebSocketFrame) {
        var data = frame.unmaskedData
        var code: UInt16?
        var reason = ""
        var valid = data.readableBytes != 1
        if data.readableBytes >= 2, let number = data.readInteger(as: UInt16.self) {
            code = number
            valid = valid && Self.isValidCloseCode(number)
            if data.readableBytes > 0 {
                if let text = Self.validatedText(data) { reason = text } else { valid = false }
            }
        }
        deliverPending(context)
        done = true
        let echo = closeState.withLock { state -> Bool in
            state.received = (code, reason)
            defer { state.closeSent = true }
            return !state.closeSent
        }
        inbound.finish()
        if echo {
            var payload = ByteBuffer()
            payload.write(webSocketErrorCode: valid ? WebSocketErrorCode(codeNumber: Int(code ?? 1000)) : .protocolError)
            write(context, WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: payload))
        } else {
            // Our close was answered: the handshake is complete.
            context.close(promise: nil)
        }
    }

    /// Fails the connection (RFC 6455 7.1.7): what was read before is delivered, a close with `code` goes out unless
    /// one already did, and the socket is dropped.
    private func fail(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode) {
        deliverPending(context)
        done = true
        fragments = nil
        let send = closeState.withLock { state -> Bool in
            if state.failure == nil { state.failure = UInt16(webSocketErrorCode: code) }
            defer { state.closeSent = true }
            return !state.closeSent
        }
        inbound.finish()
        guard send else { return context.close(promise: nil) }
        var payload = ByteBuffer()
        payload.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: payload)
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    private func write(_ context: ChannelHandlerContext, _ frame: WebSocketFrame) {
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    /// 1000–1003, 1007–1011 and the application ranges 3000–4999 (RFC 6455 7.4).
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
    }

    /// The bytes as a `String` if they are valid UTF-8. ASCII (nearly every frame) is valid as it is and is decoded
    /// straight from contiguous memory; only other text goes through validation.
    static func validatedText(_ data: ByteBuffer) -> String? {
        data.withUnsafeReadableBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            if ASCIIScan.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) { return String(validating: bytes, as: UTF8.self) }
            return String(bytes: bytes, encoding: .utf8)
        }
    }
}
