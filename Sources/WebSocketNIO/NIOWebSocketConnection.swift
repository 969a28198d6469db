import Foundation
import NIOCore
import NIOWebSocket
import SubscriberCore

/// The connection ``NIOWebSocketConnector`` hands to a scope: the upgraded channel, alive exactly as long as the
/// scope's closure.
final class NIOWebSocketConnection: WebSocketConnection {
    let negotiatedSubprotocol: String?
    private let channel: any Channel
    private let inbound: WebSocketInbound
    private let closeState: Locked<WebSocketCloseState>
    private let pongHandler: Locked<(@Sendable () -> Void)?>
    private let maxFrameSize: Int
    /// The channel's event loop, when the connector offers it to the link.
    let linkExecutor: (any LinkExecutor)?

    init(
        channel: any Channel, inbound: WebSocketInbound, closeState: Locked<WebSocketCloseState>,
        pongHandler: Locked<(@Sendable () -> Void)?>, maxFrameSize: Int, negotiatedSubprotocol: String?,
        linkExecutor: (any LinkExecutor)?
    ) {
        self.channel = channel
        self.inbound = inbound
        self.closeState = closeState
        self.pongHandler = pongHandler
        self.maxFrameSize = maxFrameSize
        self.negotiatedSubprotocol = negotiatedSubprotocol
        self.linkExecutor = linkExecutor
    }

    func receive() async throws -> WebSocketMessage? {
        try await inbound.nextOne()
    }

    func receiveBatch() async throws -> [WebSocketMessage]? {
        try await inbound.next()
    }

    func send(_ message: WebSocketMessage) async throws {
        guard closeState.withLock({ !$0.closeSent && !$0.aborted }) else { throw WebSocketSeamError.notConnected }
        let (opcode, data): (WebSocketOpcode, ByteBuffer) =
            switch message {
            case .text(let text): (.text, ByteBuffer(string: text))
            case .binary(let bytes): (.binary, ByteBuffer(bytes: bytes))
            }
        // Messages above the frame size go out as a first frame and continuation frames.
        var remaining = data
        var first = true
        repeat {
            let slice = remaining.readSlice(length: min(maxFrameSize, remaining.readableBytes)) ?? ByteBuffer()
            let frame = WebSocketFrame(
                fin: remaining.readableBytes == 0, opcode: first ? opcode : .continuation, maskKey: .random(), data: slice)
            first = false
            // A write into a full send buffer (a peer that stopped reading) waits as long as the peer, and NIO's future
            // ignores cancellation: wait for it in a way cancellation ends at once. The write stays queued until the
            // scope's end closes the channel, which fails it.
            let written = OneShotSignal<Result<Void, any Error>>()
            channel.writeAndFlush(frame).whenComplete { written.fire($0) }
            guard let result = await written.wait() else { throw CancellationError() }
            guard case .success = result else { throw WebSocketSeamError.notConnected }
        } while remaining.readableBytes > 0
    }

    func close(code: UInt16, reason: String) async {
        let send = closeState.withLock { state -> Bool in
            guard !state.closeSent, !state.aborted else { return false }
            state.closeSent = true
            state.initiatedLocally = true
            return true
        }
        guard send else { return }
        var payload = ByteBuffer()
        payload.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code)))
        payload.writeString(WebSocketCloseInfo.frameReason(reason))
        // Queued, not awaited: a flush into a full send buffer (a blackholed peer) would wait as long as the peer, and a
        // scope closes before it waits for its tasks. The scope's end waits at most the close timeout for the peer.
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: payload), promise: nil)
    }

    /// A ping with an empty payload, written without waiting: its pong is reported by ``WebSocketFrameHandler`` on the
    /// event loop. After a close or an abort nothing is sent (the link ends anyway).
    func sendPing() -> Bool {
        guard closeState.withLock({ !$0.closeSent && !$0.aborted }) else { return true }
        _ = channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, maskKey: .random(), data: ByteBuffer()))
        return true
    }

    func onPong(_ handler: @escaping @Sendable () -> Void) {
        pongHandler.withLock { $0 = handler }
    }

    /// What waits for the reader, and whether reading from the socket is paused for it (for tests).
    var inboundBacklog: (messages: Int, bytes: Int, paused: Bool) { inbound.backlog }

    /// Whether the channel reads from the socket (`autoRead`), which a full inbound queue turns off (for tests).
    func readsFromSocket() async throws -> Bool {
        try await channel.getOption(ChannelOptions.autoRead).get()
    }

    /// The bytes written to the channel that the socket has not taken yet (for tests).
    func bufferedOutboundBytes() async throws -> Int {
        try await channel.getOption(ChannelOptions.bufferedWritableBytes).get()
    }

    func abort() {
        closeState.withLock { $0.aborted = true }
        SocketDropHandler.drop(channel)
    }
}
