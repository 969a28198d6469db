import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SubscriberCore

/// A minimal WebSocket server on a real socket (127.0.0.1, an ephemeral port) for smoke-testing the NIO connector.
///
/// It records the upgrade request and every frame the client sends, answers pings itself, selects the
/// subprotocol it is told to, and lets the test send text, binary, ping and close frames. One client at a time.
final class ScriptedNIOWebSocketServer: Sendable {
    /// How the server behaves.
    struct Options: Sendable {
        /// The subprotocol put in the upgrade response, if any.
        var selectedSubprotocol: String?
        /// Answer the upgrade request with this status instead of switching protocols.
        var rejectUpgradeWith: HTTPResponseStatus?
        /// Accept the TCP connection but never answer the upgrade request.
        var silentUpgrade = false
        /// Whether the server answers the client's close frame (and then closes the TCP connection).
        var answersClose = true
        /// Whether the server answers the client's pings with pongs.
        var answersPings = true
        /// The largest frame the server accepts.
        var maxFrameSize = 4 * 1024 * 1024
    }

    /// A close frame the client sent.
    struct ClientClose: Sendable, Equatable {
        var code: UInt16?
        var reason: String
    }

    fileprivate struct State {
        var upgradeRequests: [HTTPHeaders] = []
        var texts: [String] = []
        var binaries: [[UInt8]] = []
        var pongs: [[UInt8]] = []
        var pings: [[UInt8]] = []
        var clientCloses: [ClientClose] = []
        var client: (any Channel)?
        var accepted: [any Channel] = []
        var serverSentClose = false
        var clientDisconnected = false
    }

    /// The port the server listens on.
    let port: Int
    let options: Options
    private let serverChannel: any Channel
    fileprivate let state: Locked<State>

    private init(port: Int, options: Options, serverChannel: any Channel, state: Locked<State>) {
        self.port = port
        self.options = options
        self.serverChannel = serverChannel
        self.state = state
    }

    /// The `ws://` URL of the server.
    var url: URL { URL(string: "ws://127.0.0.1:\(port)/event/realtime")! }

    /// Starts a server on 127.0.0.1 with an ephemeral port.
    static func start(_ options: Options = Options()) async throws -> ScriptedNIOWebSocketServer {
        let state = Locked(State())
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: options.maxFrameSize,
            automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                state.withLock { $0.upgradeRequests.append(head.headers) }
                var headers = HTTPHeaders()
                if let selected = options.selectedSubprotocol {
                    headers.add(name: "Sec-WebSocket-Protocol", value: selected)
                }
                return channel.eventLoop.makeSucceededFuture(headers)
            },
            upgradePipelineHandler: { channel, _ in
                state.withLock { $0.client = channel }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ServerFrameHandler(state: state, answersClose: options.answersClose, answersPings: options.answersPings)
                    )
                }
            }
        )
        let serverChannel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                state.withLock { $0.accepted.append(channel) }
                if options.silentUpgrade {
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
                if let status = options.rejectUpgradeWith {
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(RejectingHTTPHandler(status: status, state: state))
                    }
                }
                return channel.pipeline.configureHTTPServerPipeline(
                    withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                )
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = serverChannel.localAddress?.port else {
            throw ServerError("the server socket has no port")
        }
        return ScriptedNIOWebSocketServer(port: port, options: options, serverChannel: serverChannel, state: state)
    }

    /// Stops listening and drops every accepted connection.
    func shutdown() async {
        let accepted = state.withLock { $0.accepted }
        for channel in accepted {
            try? await channel.close()
        }
        try? await serverChannel.close()
    }

    // MARK: Recorded

    /// The headers of every upgrade request, in order.
    var upgradeRequests: [HTTPHeaders] { state.withLock { $0.upgradeRequests } }
    /// Every text message the client sent, in order.
    var receivedTexts: [String] { state.withLock { $0.texts } }
    /// Every binary message the client sent, in order.
    var receivedBinaries: [[UInt8]] { state.withLock { $0.binaries } }
    /// The payload of every pong the client sent.
    var receivedPongs: [[UInt8]] { state.withLock { $0.pongs } }
    /// The close frames the client sent.
    var clientCloses: [ClientClose] { state.withLock { $0.clientCloses } }
    /// Whether the client's TCP connection has gone.
    var clientDisconnected: Bool { state.withLock { $0.clientDisconnected } }

    /// Waits for the first upgrade request.
    func waitForUpgradeRequest() async throws -> HTTPHeaders {
        try await poll("the upgrade request") { $0.upgradeRequests.first }
    }

    /// Waits until the client has sent `count` text messages and returns them.
    func waitForTexts(_ count: Int) async throws -> [String] {
        try await poll("\(count) text messages") { $0.texts.count >= count ? $0.texts : nil }
    }

    /// The payload of every ping the client sent.
    var receivedPings: [[UInt8]] { state.withLock { $0.pings } }

    /// Waits until the client has sent `count` pings.
    func waitForPings(_ count: Int) async throws -> [[UInt8]] {
        try await poll("\(count) ping(s)") { $0.pings.count >= count ? $0.pings : nil }
    }

    /// Waits for the client's first pong.
    func waitForPong() async throws -> [UInt8] {
        try await poll("a pong") { $0.pongs.first }
    }

    /// Waits for the client's close frame.
    func waitForClientClose() async throws -> ClientClose {
        try await poll("the client's close frame") { $0.clientCloses.first }
    }

    /// Waits until the client's TCP connection is gone.
    func waitForDisconnect() async throws {
        _ = try await poll("the client to disconnect") { $0.clientDisconnected ? true : nil }
    }

    private func poll<T: Sendable>(_ what: String, _ read: @escaping @Sendable (State) -> T?) async throws -> T {
        let state = state
        return try await withSmokeTimeout(10, what) {
            while true {
                if let value = state.withLock({ read($0) }) { return value }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    // MARK: Scripted server frames

    /// Sends a text frame.
    func send(text: String) async throws {
        try await write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
    }

    /// Sends a binary frame.
    func send(binary: [UInt8]) async throws {
        try await write(WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: binary)))
    }

    /// Sends one text message split into the given fragments (a text frame, then continuation frames).
    func send(fragments: [String]) async throws {
        for (index, fragment) in fragments.enumerated() {
            let frame = WebSocketFrame(
                fin: index == fragments.count - 1,
                opcode: index == 0 ? .text : .continuation,
                data: ByteBuffer(string: fragment)
            )
            try await write(frame)
        }
    }

    /// Sends a ping with `payload`.
    func sendPing(_ payload: [UInt8]) async throws {
        try await write(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(bytes: payload)))
    }

    /// Sends a close frame; the server closes the TCP connection when the client answers.
    func sendClose(code: UInt16, reason: String) async throws {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code)))
        data.writeString(reason)
        state.withLock { $0.serverSentClose = true }
        try await write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
    }

    /// Sends any frame, well-formed or not (RSV bits, reserved opcodes).
    func send(frame: WebSocketFrame) async throws {
        try await write(frame)
    }

    private func write(_ frame: WebSocketFrame) async throws {
        let client = try await poll("the client connection") { $0.client }
        try await client.writeAndFlush(frame)
    }

    struct ServerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Records the client's frames and plays the server's part of the protocol (pong, close answer).
private final class ServerFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let state: Locked<ScriptedNIOWebSocketServer.State>
    private let answersClose: Bool
    private let answersPings: Bool
    private var fragments: (opcode: WebSocketOpcode, bytes: [UInt8])?

    init(state: Locked<ScriptedNIOWebSocketServer.State>, answersClose: Bool, answersPings: Bool) {
        self.state = state
        self.answersClose = answersClose
        self.answersPings = answersPings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let payload = Array(frame.unmaskedData.readableBytesView)
        switch frame.opcode {
        case .text, .binary:
            fragments = (frame.opcode, payload)
            if frame.fin { completeMessage() }
        case .continuation:
            fragments?.bytes += payload
            if frame.fin { completeMessage() }
        case .ping:
            state.withLock { $0.pings.append(payload) }
            guard answersPings else { break }
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            state.withLock { $0.pongs.append(payload) }
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode().map { UInt16(webSocketErrorCode: $0) }
            let reason = data.readString(length: data.readableBytes) ?? ""
            let serverStarted = state.withLock { state -> Bool in
                state.clientCloses.append(.init(code: code, reason: reason))
                return state.serverSentClose
            }
            if serverStarted {
                // The client answered our close: the handshake is complete.
                context.close(promise: nil)
            } else if answersClose {
                let echo = WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(echo)).whenComplete { _ in
                    channel.close(promise: nil)
                }
            }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.withLock { $0.clientDisconnected = true }
        context.fireChannelInactive()
    }

    private func completeMessage() {
        guard let message = fragments else { return }
        fragments = nil
        state.withLock { state in
            if message.opcode == .text {
                state.texts.append(String(decoding: message.bytes, as: UTF8.self))
            } else {
                state.binaries.append(message.bytes)
            }
        }
    }
}

/// Answers every request with a fixed status instead of upgrading.
private final class RejectingHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let status: HTTPResponseStatus
    private let state: Locked<ScriptedNIOWebSocketServer.State>

    init(status: HTTPResponseStatus, state: Locked<ScriptedNIOWebSocketServer.State>) {
        self.status = status
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            state.withLock { $0.upgradeRequests.append(head.headers) }
        case .body:
            break
        case .end:
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "0")
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }
}

/// Runs `operation`, failing if it takes longer than `seconds`, so a hang fails the test instead of blocking it.
///
/// The operation runs in its own task and is only cancelled on timeout, never awaited after it: a call that ignores
/// cancellation still cannot hold the test up.
func withSmokeTimeout<T: Sendable>(
    _ seconds: Double = 10,
    _ what: String = "the operation",
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let slot = Locked<CheckedContinuation<T, any Error>?>(nil)
    let resume: @Sendable (Result<T, any Error>) -> Bool = { result in
        guard
            let continuation = slot.withLock({ slot in
                defer { slot = nil }; return slot
            })
        else { return false }
        continuation.resume(with: result)
        return true
    }
    let timer = Locked<Task<Void, Never>?>(nil)
    return try await withCheckedThrowingContinuation { continuation in
        slot.withLock { $0 = continuation }
        let work = Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            if resume(result) { timer.withLock { $0?.cancel() } }
        }
        let sleeper = Task {
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            guard !Task.isCancelled else { return }
            if resume(.failure(ScriptedNIOWebSocketServer.ServerError("timed out after \(seconds) s waiting for \(what)"))) {
                work.cancel()
            }
        }
        timer.withLock { $0 = sleeper }
    }
}
