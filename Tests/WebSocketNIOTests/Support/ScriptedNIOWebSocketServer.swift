import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOTestServer
import NIOWebSocket
import RealtimeTesting
import SubscriberCore

/// A minimal WebSocket server on a real socket (127.0.0.1, an ephemeral port) for smoke-testing the NIO connector: a
/// ``NIOWebSocketTestServer`` configured to record and obey the test.
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
        /// Serve TLS with this configuration (`wss://`): NIOSSL's server handler in front of the HTTP handlers.
        var tls: TLSConfiguration?
    }

    /// A close frame the client sent.
    struct ClientClose: Sendable, Equatable {
        var code: UInt16?
        var reason: String
    }

    fileprivate struct State {
        var texts: [String] = []
        var binaries: [[UInt8]] = []
        var pongs: [[UInt8]] = []
        var pings: [[UInt8]] = []
        var clientCloses: [ClientClose] = []
        var client: (any Channel)?
        var serverSentClose = false
        var clientDisconnected = false
        /// The server name (SNI) of every TLS handshake, `nil` for one that sent none.
        var serverNames: [String?] = []
    }

    private let server: NIOWebSocketTestServer
    fileprivate let state: Locked<State>

    private init(server: NIOWebSocketTestServer, state: Locked<State>) {
        self.server = server
        self.state = state
    }

    /// The port the server listens on.
    var port: Int { server.port }

    /// The `ws://` URL of the server.
    var url: URL { server.url }

    /// The `wss://` URL of the server under `host` (the server answers any name; its certificate decides).
    func secureURL(host: String = "localhost", port: Int? = nil) -> URL {
        URL(string: "wss://\(host):\(port ?? server.port)/event/realtime")!
    }

    /// Starts a server on 127.0.0.1 with an ephemeral port.
    static func start(_ options: Options = Options()) async throws -> ScriptedNIOWebSocketServer {
        let state = Locked(State())
        var behaviour = NIOWebSocketTestServer.Behaviour { channel, _ in
            state.withLock { $0.client = channel }
            try channel.pipeline.syncOperations.addHandler(
                ServerFrameHandler(state: state, answersClose: options.answersClose, answersPings: options.answersPings))
        }
        behaviour.selectSubprotocol = { _ in options.selectedSubprotocol }
        behaviour.maxFrameSize = options.maxFrameSize
        if options.silentUpgrade {
            behaviour.upgrade = .silent
        } else if let status = options.rejectUpgradeWith {
            behaviour.upgrade = .reject(status)
        }
        if var tls = options.tls {
            tls.sslContextCallback = { hello, promise in
                state.withLock { $0.serverNames.append(hello.serverHostname) }
                promise.succeed(.noChanges)
            }
            let context = try NIOSSLContext(configuration: tls)
            behaviour.accepted = { channel, _ in
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            }
        }
        let server = try await NIOWebSocketTestServer.start(behaviour)
        return ScriptedNIOWebSocketServer(server: server, state: state)
    }

    /// Stops listening and drops every accepted connection.
    func shutdown() async {
        await server.shutdown()
    }

    // MARK: Recorded

    /// The headers of every upgrade request, in order.
    var upgradeRequests: [HTTPHeaders] { server.upgradeRequests }
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
    /// The server name (SNI) of every TLS handshake, in order; `nil` for a handshake that sent none.
    var serverNames: [String?] { state.withLock { $0.serverNames } }

    /// Waits for the first upgrade request.
    func waitForUpgradeRequest() async throws -> HTTPHeaders {
        let server = server
        return try await poll("the upgrade request") { _ in server.upgradeRequests.first }
    }

    /// Waits until the server has accepted a TCP connection (with a silent upgrade, the client then waits for the
    /// answer to its upgrade request).
    func waitForAcceptedConnection() async throws {
        let server = server
        _ = try await poll("a TCP connection") { _ in server.acceptedCount > 0 ? true : nil }
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

    /// Waits until the client's latest pong has `payload`; returns how many pongs the client had sent by then.
    func waitForLastPong(_ payload: [UInt8]) async throws -> Int {
        try await poll("a pong of \(payload.prefix(4))…") { $0.pongs.last == payload ? $0.pongs.count : nil }
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
        return try await withTestTimeout(10, what) {
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

    /// Sends any frame, well-formed or not (RSV bits, reserved opcodes, a mask).
    func send(frame: WebSocketFrame) async throws {
        try await write(frame)
    }

    /// Sends `count` pings, `payload(0)` … `payload(count - 1)`, in one flush: a flood, not a conversation.
    func sendPings(_ count: Int, payload: @escaping @Sendable (Int) -> [UInt8]) async throws {
        let client = try await poll("the client connection") { $0.client }
        let ping = { @Sendable (index: Int) in WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(bytes: payload(index))) }
        try await client.eventLoop.flatSubmit {
            for index in 0..<count - 1 { client.write(ping(index), promise: nil) }
            return client.writeAndFlush(ping(count - 1))
        }.get()
    }

    /// Sends text messages `text(0)`, `text(1)`, … until the socket takes no more (the client stopped reading and the
    /// buffers between are full), at least `minimum` and at most `limit` (both alike: exactly that many, without
    /// waiting for the client); returns how many were written.
    func sendUntilBackedUp(minimum: Int, limit: Int, _ text: @escaping @Sendable (Int) -> String) async throws -> Int {
        let client = try await poll("the client connection") { $0.client }
        var sent = 0
        while sent < limit {
            let from = sent
            // About 64 KiB at a time on the event loop, which reads the socket's writability between batches.
            let next = try await client.eventLoop.submit { () -> Int? in
                if from >= minimum && !client.isWritable { return nil }
                var (index, bytes) = (from, 0)
                while index < limit && bytes < 64 * 1024 {
                    let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text(index)))
                    bytes += frame.length
                    index += 1
                    client.write(frame, promise: nil)
                }
                client.flush()
                return index
            }.get()
            guard let next else { break }
            sent = next
        }
        return sent
    }

    /// Stops reading the client's frames (its writes back up), or reads them again.
    func readClient(_ reads: Bool) async throws {
        let client = try await poll("the client connection") { $0.client }
        try await client.setOption(ChannelOptions.autoRead, value: reads).get()
        if reads { client.read() }
    }

    private func write(_ frame: WebSocketFrame) async throws {
        let client = try await poll("the client connection") { $0.client }
        try await client.writeAndFlush(frame)
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

/// Runs `body` with a scripted server started with `options`, and shuts the server down however `body` ends.
func withServer(
    _ options: ScriptedNIOWebSocketServer.Options = .init(), _ body: (ScriptedNIOWebSocketServer) async throws -> Void
) async throws {
    let server = try await ScriptedNIOWebSocketServer.start(options)
    do {
        try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// ``withTestTimeout(_:_:_:)`` under the name these tests have always used.
func withSmokeTimeout<T: Sendable>(
    _ seconds: Double = 10,
    _ what: String = "the operation",
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withTestTimeout(seconds, what, operation)
}
