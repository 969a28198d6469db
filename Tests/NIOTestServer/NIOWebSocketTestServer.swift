import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SubscriberCore

/// A WebSocket server on 127.0.0.1 (an ephemeral port) for tests over real sockets, on SwiftNIO: the listening socket,
/// the HTTP upgrade (or its refusal), the subprotocol answer and the bookkeeping of connections are here; what a
/// connection does once upgraded is the test's (``Behaviour/upgraded``).
///
/// Two servers configure it: the NIO connector tests' scripted server (`ScriptedNIOWebSocketServer`, which records the
/// client's frames and sends what the test says) and the fuzz suite's hostile one (`HostileWebSocketServer`, which
/// writes seeded raw frames that break every rule). It is a target of its own, linked by test targets only, so no
/// product pays for SwiftNIO through it.
public final class NIOWebSocketTestServer: Sendable {
    /// How the server answers the upgrade request of an accepted connection.
    public enum Upgrade: Sendable {
        /// Switches protocols, answering with the subprotocol ``Behaviour/selectSubprotocol`` picks.
        case accept
        /// Answers with this status instead (no body), then closes the connection.
        case reject(HTTPResponseStatus)
        /// Accepts the TCP connection but never answers.
        case silent
    }

    /// What the server does with every connection.
    public struct Behaviour: Sendable {
        /// How the upgrade request is answered.
        public var upgrade: Upgrade = .accept
        /// The subprotocol put in the upgrade response, from those the client offered (`nil`: none).
        public var selectSubprotocol: @Sendable (_ offered: [String]) -> String? = { _ in nil }
        /// The largest frame the server's frame decoder accepts.
        public var maxFrameSize = 1 << 20
        /// Whether NIO's frame decoder answers a malformed frame itself (a close, then the end of the connection).
        public var automaticErrorHandling = true
        /// `SO_SNDBUF` of every accepted connection; `nil`: the system's.
        public var sendBufferSize: Int?
        /// Runs on the connection's event loop for every accepted TCP connection, with its index (0, 1, …), before the
        /// HTTP handlers are added: handlers added here sit in front of them.
        public var accepted: @Sendable (_ channel: any Channel, _ index: Int) throws -> Void = { _, _ in }
        /// Runs on the connection's event loop once it is upgraded: adds the handlers that play the server's side.
        public var upgraded: @Sendable (_ channel: any Channel, _ index: Int) throws -> Void

        /// A server that upgrades every connection and hands it to `upgraded`.
        public init(upgraded: @escaping @Sendable (_ channel: any Channel, _ index: Int) throws -> Void) {
            self.upgraded = upgraded
        }
    }

    fileprivate struct State {
        var accepted: [any Channel] = []
        var upgradeRequests: [HTTPHeaders] = []
    }

    /// The port the server listens on.
    public let port: Int
    private let serverChannel: any Channel
    private let state: Locked<State>

    private init(port: Int, serverChannel: any Channel, state: Locked<State>) {
        self.port = port
        self.serverChannel = serverChannel
        self.state = state
    }

    /// The `ws://` URL of the server (AppSync's real-time path; the server answers any path alike).
    public var url: URL { URL(string: "ws://127.0.0.1:\(port)/event/realtime")! }

    /// The headers of every upgrade request, in order (a refused one too; none for ``Upgrade/silent``).
    public var upgradeRequests: [HTTPHeaders] { state.withLock { $0.upgradeRequests } }

    /// How many TCP connections the server has accepted.
    public var acceptedCount: Int { state.withLock { $0.accepted.count } }

    /// Starts listening on 127.0.0.1 with an ephemeral port.
    public static func start(_ behaviour: Behaviour) async throws -> NIOWebSocketTestServer {
        let state = Locked(State())
        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
        if let size = behaviour.sendBufferSize {
            bootstrap = bootstrap.childChannelOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(size))
        }
        let serverChannel = try await bootstrap.childChannelInitializer { channel in
            let index = state.withLock { state -> Int in
                state.accepted.append(channel)
                return state.accepted.count - 1
            }
            return channel.eventLoop.makeCompletedFuture {
                try behaviour.accepted(channel, index)
                let pipeline = channel.pipeline.syncOperations
                switch behaviour.upgrade {
                case .silent:
                    break
                case .reject(let status):
                    try pipeline.configureHTTPServerPipeline()
                    try pipeline.addHandler(RejectingHTTPHandler(status: status, state: state))
                case .accept:
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: behaviour.maxFrameSize,
                        automaticErrorHandling: behaviour.automaticErrorHandling,
                        shouldUpgrade: { channel, head in
                            state.withLock { $0.upgradeRequests.append(head.headers) }
                            let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                                .map { $0.trimmingCharacters(in: .whitespaces) }
                            var headers = HTTPHeaders()
                            if let selected = behaviour.selectSubprotocol(offered) {
                                headers.add(name: "Sec-WebSocket-Protocol", value: selected)
                            }
                            return channel.eventLoop.makeSucceededFuture(headers)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture { try behaviour.upgraded(channel, index) }
                        }
                    )
                    try pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
        }
        .bind(host: "127.0.0.1", port: 0)
        .get()
        guard let port = serverChannel.localAddress?.port else {
            try? await serverChannel.close()
            throw StartFailure()
        }
        return NIOWebSocketTestServer(port: port, serverChannel: serverChannel, state: state)
    }

    /// Drops every accepted connection and stops listening.
    public func shutdown() async {
        for channel in state.withLock({ $0.accepted }) { try? await channel.close() }
        try? await serverChannel.close()
    }

    /// The listening socket has no port.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String { "the server socket has no port" }
    }
}

/// Answers every request with a fixed status instead of upgrading, recording the request's headers.
private final class RejectingHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let status: HTTPResponseStatus
    private let state: Locked<NIOWebSocketTestServer.State>

    init(status: HTTPResponseStatus, state: Locked<NIOWebSocketTestServer.State>) {
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
