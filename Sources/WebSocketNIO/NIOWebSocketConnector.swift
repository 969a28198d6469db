import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SubscriberCore

/// Opens WebSocket connections on SwiftNIO: a client bootstrap, NIOSSL for `wss://`, NIO's HTTP upgrade and frame
/// codec, and a frame handler of this module's (``WebSocketFrameHandler``) for RFC 6455's client rules.
///
/// Works on Linux and Apple platforms. Subprotocols are offered in one comma-separated `Sec-WebSocket-Protocol`
/// header; the request's headers follow in order (`Host` is set from the URL). The server's choice of subprotocol is
/// read from the 101 response, and a refused upgrade reports the HTTP status.
///
/// Frames are handed to the reader a read at a time (``WebSocketConnection/receiveBatch()``), so a link's reader
/// handles a read's frames in one go and wakes its consumers once. The server's pings are answered on the event loop;
/// the link's pings (``WebSocketConnection/sendPing()``) go out as empty ping frames and their pongs are reported to
/// the link's handler on the event loop, without waking the reader; while the socket takes no writes, only the latest
/// ping's pong waits. Up to 256 complete messages or 4 MiB of them wait for the reader before reading from the socket
/// pauses (backpressure).
///
/// Each connection offers its event loop as the link's ``LinkExecutor`` (``runsLinksOnEventLoop``): the link's reader,
/// writer and timer run on the loop that reads the socket, so an idle link wakes that one thread for a frame or a
/// deadline and nothing else.
public struct NIOWebSocketConnector: WebSocketConnector {
    /// The default limit for one frame and for one reassembled message: 2 MiB. AppSync events are at most 240 KB
    /// and one message about 1.3 MB.
    public static let defaultMaxSize = 2 * 1024 * 1024

    /// The largest frame accepted from the server; larger outgoing messages are split into frames of this size.
    public var maxFrameSize: Int
    /// The largest message (all fragments joined) accepted from the server.
    public var maxMessageSize: Int
    /// How long a closing handshake may take before the connection is dropped. Default 1 s: a peer that does not
    /// answer a close within a second is not worth waiting for. On `wss://` it bounds TLS's closing handshake too: the
    /// socket is dropped beneath TLS, whatever the configuration's `shutdownTimeout`.
    public var closeTimeout: Duration
    /// TLS settings for `wss://`; `nil` uses NIOSSL's default client configuration (system trust roots). The server
    /// name sent (SNI) and verified is the URL's host; an IP literal is sent no name and checked against the
    /// certificate's IP addresses.
    public var tlsConfiguration: TLSConfiguration?
    /// The event loops the connections run on. The group must outlive every transport that uses this connector: a
    /// loop that is shut down drops the work queued on it, the link's included.
    public var eventLoopGroup: any EventLoopGroup
    /// Whether each connection offers its event loop to its link (``WebSocketConnection/linkExecutor``). Default
    /// `true`: an idle link wakes one thread. Set `false` when the group's loops serve latency-sensitive work of their
    /// own, so a link's parsing and delivery run on the global executor instead.
    public var runsLinksOnEventLoop: Bool
    /// Where connection events are logged (at debug and trace level). Header values and subprotocols are never
    /// logged: they carry credentials.
    public var logger: Logger

    /// Creates a connector.
    ///
    /// - Parameters:
    ///   - maxFrameSize: The largest frame accepted from the server, in bytes.
    ///   - maxMessageSize: The largest reassembled message accepted from the server, in bytes.
    ///   - closeTimeout: How long the closing handshake at the end of a scope waits for the server.
    ///   - tlsConfiguration: TLS settings for `wss://`; `nil` for NIOSSL's default client configuration.
    ///   - eventLoopGroup: The event loops to run on.
    ///   - runsLinksOnEventLoop: Whether a connection's link runs and sleeps on the connection's event loop.
    ///   - logger: The logger for connection events.
    public init(
        maxFrameSize: Int = NIOWebSocketConnector.defaultMaxSize,
        maxMessageSize: Int = NIOWebSocketConnector.defaultMaxSize,
        closeTimeout: Duration = .seconds(1),
        tlsConfiguration: TLSConfiguration? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        runsLinksOnEventLoop: Bool = true,
        logger: Logger = Logger(label: "vortex.websocket")
    ) {
        // Out-of-range sizes are clamped rather than trapping: a frame size must fit the protocol's 32-bit field.
        self.maxFrameSize = min(max(1, maxFrameSize), Int(UInt32.max))
        self.maxMessageSize = max(1, maxMessageSize)
        self.closeTimeout = closeTimeout
        self.tlsConfiguration = tlsConfiguration
        self.eventLoopGroup = eventLoopGroup
        self.runsLinksOnEventLoop = runsLinksOnEventLoop
        self.logger = logger
    }

    /// Opens a connection, runs `body` while it is open, and ends it: after `body` returns, a close (1000 unless
    /// `body` sent one) waits at most ``closeTimeout`` for the server to drop the connection; after
    /// ``WebSocketConnection/abort()`` the socket is dropped at once.
    ///
    /// - Throws: ``WebSocketSeamError/invalidURL(_:)`` for a URL that is not `ws://` or `wss://`,
    ///   ``WebSocketSeamError/connectionFailed(_:)`` when TCP, TLS (its configuration included) or DNS fail,
    ///   ``WebSocketSeamError/upgradeRejected(_:)`` when the server does not switch protocols, what `body` threw,
    ///   and `CancellationError` when the calling task is cancelled first.
    public func withConnection<Value: Sendable>(
        _ request: WebSocketRequest,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        let endpoint = try WebSocketEndpoint(request.url)
        let head = try upgradeRequestHead(for: request, endpoint: endpoint)
        logger.debug(
            "Opening WebSocket",
            metadata: ["ws.endpoint": "\(endpoint.redacted)", "ws.subprotocol.count": "\(request.subprotocols.count)"]
        )
        let inbound = WebSocketInbound()
        let closeState = Locked(WebSocketCloseState())
        let pongHandler = Locked<(@Sendable () -> Void)?>(nil)
        let opened = OneShotSignal<Result<String?, any Error>>()
        let channel = try await open(
            endpoint, head: head, inbound: inbound, closeState: closeState, pongHandler: pongHandler, opened: opened)
        let subprotocol: String?
        do {
            subprotocol = try await withTaskCancellationHandler {
                guard let result = await opened.wait() else { throw CancellationError() }
                return try result.get()
            } onCancel: {
                SocketDropHandler.drop(channel)
            }
            // RFC 6455 §4.1: a connection whose server chose another subprotocol is failed, never used.
            try request.checkSelectedSubprotocol(subprotocol)
        } catch {
            SocketDropHandler.drop(channel)
            logger.debug("WebSocket did not open", metadata: ["ws.endpoint": "\(endpoint.redacted)", "ws.error": "\(error)"])
            // Cancelling closes the channel, and the upgrade may report that close before the wait sees the
            // cancellation: the caller cancelled, so that is what it learns.
            if Task.isCancelled { throw CancellationError() }
            throw error
        }

        let connection = NIOWebSocketConnection(
            channel: channel, inbound: inbound, closeState: closeState, pongHandler: pongHandler, maxFrameSize: maxFrameSize,
            negotiatedSubprotocol: subprotocol,
            linkExecutor: runsLinksOnEventLoop ? EventLoopLinkExecutor(eventLoop: channel.eventLoop) : nil)
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body(connection)) } catch { outcome = .failure(error) }
        await finish(channel, connection, closeState)
        let value = try outcome.get()
        let info = Self.closeInfo(closeState.withLock { $0 })
        logger.debug("WebSocket closed", metadata: ["ws.close": "\(info)"])
        return WebSocketScopeResult(value: value, close: info)
    }

    private static let upgradeHandlerName = "vortex.websocket.upgrade-request"

    /// Connects and starts the upgrade; `opened` fires when it is decided.
    private func open(
        _ endpoint: WebSocketEndpoint, head: HTTPRequestHead, inbound: WebSocketInbound, closeState: Locked<WebSocketCloseState>,
        pongHandler: Locked<(@Sendable () -> Void)?>, opened: OneShotSignal<Result<String?, any Error>>
    ) async throws -> any Channel {
        let tls: NIOSSLContext?
        do {
            tls = try endpoint.secure ? NIOSSLContext(configuration: tlsConfiguration ?? .makeClientConfiguration()) : nil
        } catch {
            // A trust root or certificate file that cannot be loaded: a seam error like every other failure to open.
            throw WebSocketSeamError.connectionFailed("TLS configuration: \(error)")
        }
        let (maxFrameSize, maxMessageSize) = (self.maxFrameSize, self.maxMessageSize)
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                // Set before any frame can arrive: reading paused by a full inbound queue must always resume.
                inbound.onResumeReading {
                    channel.eventLoop.execute {
                        channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in channel.read() }
                    }
                }
                do {
                    try channel.pipeline.syncOperations.addHandler(SocketDropHandler(), name: SocketDropHandler.name)
                    if let tls {
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: endpoint.serverName)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(DeferredInactiveHandler())
                    let request = UpgradeRequestHandler(head: head, opened: opened)
                    let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: maxFrameSize, automaticErrorHandling: false) {
                        channel, response in
                        channel.eventLoop.makeCompletedFuture {
                            let handler = WebSocketFrameHandler(
                                inbound: inbound, closeState: closeState, pongHandler: pongHandler, maxMessageSize: maxMessageSize)
                            try channel.pipeline.syncOperations.addHandler(handler)
                            opened.fire(.success(response.headers.first(name: "Sec-WebSocket-Protocol")))
                        }
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes,
                        withClientUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.removeHandler(name: Self.upgradeHandlerName, promise: nil)
                            }
                        ))
                    try channel.pipeline.syncOperations.addHandler(request, name: Self.upgradeHandlerName)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        // NIO's connect cannot be cancelled and may take its whole connect timeout (a dropped SYN): wait for it in a
        // way cancellation ends at once, and close the channel should it connect after all.
        let connected = OneShotSignal<Result<any Channel, any Error>>()
        let connecting = bootstrap.connect(host: endpoint.host, port: endpoint.port)
        connecting.whenComplete { connected.fire($0) }
        guard let result = await connected.wait() else {
            opened.fire(.failure(CancellationError()))
            connecting.whenSuccess { SocketDropHandler.drop($0) }
            throw CancellationError()
        }
        do {
            return try result.get()
        } catch {
            throw WebSocketSeamError.connectionFailed(ConnectFailureText.describe(error))
        }
    }

    /// Ends the scope's connection: a close (1000) unless one went out or it was aborted, then at most
    /// ``closeTimeout`` for the server to drop it.
    private func finish(_ channel: any Channel, _ connection: NIOWebSocketConnection, _ closeState: Locked<WebSocketCloseState>) async {
        if closeState.withLock({ !$0.closeSent && !$0.aborted }) { await connection.close(code: 1000, reason: "") }
        // Dropped from in front of TLS: NIOSSL would otherwise hold a silent peer's socket for its own shutdown timeout.
        // NIO's conversion clamps (a timeout past `Int64.max` nanoseconds, 292 years, waits that long), where an `Int64`
        // of the nanoseconds would trap.
        let timeout = channel.eventLoop.scheduleTask(in: TimeAmount(max(closeTimeout, .zero))) {
            SocketDropHandler.drop(channel)
        }
        try? await channel.closeFuture.get()
        timeout.cancel()
    }

    static func closeInfo(_ state: WebSocketCloseState) -> WebSocketCloseInfo {
        if state.aborted { return .aborted }
        if let received = state.received {
            return WebSocketCloseInfo(code: received.code, reason: received.reason, initiatedLocally: state.initiatedLocally)
        }
        if let failure = state.failure {
            return WebSocketCloseInfo(code: failure, reason: "the WebSocket layer failed the connection", initiatedLocally: true)
        }
        return WebSocketCloseInfo(code: nil, reason: "connection closed without a close code", initiatedLocally: state.initiatedLocally)
    }

    /// The upgrade request: `Host`, the offered subprotocols, then the request's headers in order.
    private func upgradeRequestHead(for request: WebSocketRequest, endpoint: WebSocketEndpoint) throws -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: endpoint.hostHeader)
        if !request.subprotocols.isEmpty {
            headers.add(name: "Sec-WebSocket-Protocol", value: request.subprotocols.joined(separator: ", "))
        }
        for header in request.headers {
            guard !header.name.isEmpty, header.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
                throw WebSocketSeamError.connectionFailed("invalid HTTP header field name \"\(header.name)\"")
            }
            if header.name.lowercased() == "host" {
                logger.debug("Not sending a second Host header", metadata: ["ws.header": "\(header.name)"])
                continue
            }
            headers.add(name: header.name, value: header.value)
        }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: endpoint.target, headers: headers)
    }
}

/// A validated `ws://` or `wss://` URL, split the way the connection needs it.
private struct WebSocketEndpoint: Sendable {
    /// `wss://`.
    let secure: Bool
    /// The host to connect to (IPv6 literals without brackets).
    let host: String
    let port: Int
    /// The `Host` header: the host (bracketed when IPv6) and the port when the URL names one.
    let hostHeader: String
    /// The TLS server name (SNI); `nil` for IP literals, which SNI does not carry.
    let serverName: String?
    /// The request target: the path (at least `/`) and the query.
    let target: String
    /// Scheme, host, port and path only: queries may carry credentials, so they are never logged.
    let redacted: String

    init(_ url: URL) throws(WebSocketSeamError) {
        let checked = try WebSocketURL(url)
        let components = checked.components
        var host = checked.host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        secure = checked.secure
        self.host = host
        port = components.port ?? (secure ? 443 : 80)
        let bracketed = host.contains(":") ? "[\(host)]" : host
        hostHeader = components.port.map { "\(bracketed):\($0)" } ?? bracketed
        let isIPLiteral = host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        serverName = isIPLiteral ? nil : host
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        redacted = checked.redacted
    }
}
