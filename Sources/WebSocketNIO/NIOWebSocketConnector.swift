import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SubscriberCore
import WSClient

/// Opens WebSocket connections with swift-websocket's `WebSocketClient` (the `WSClient` module) on SwiftNIO.
///
/// Works on Linux and Apple platforms, for `ws://` and `wss://` URLs (TLS through NIOSSL). Subprotocols are offered
/// in one comma-separated `Sec-WebSocket-Protocol` header; the request's headers follow in order. WSClient sets
/// `Host` and `Origin` from the URL itself, so request headers with those names are not sent a second time.
///
/// Limitations of WSClient 1.6 that show through the seam:
/// - The upgrade response is not exposed, so `negotiatedSubprotocol` is always `nil`
///   (the server's choice cannot be read, and reporting the first offered one would be a guess).
/// - A refused upgrade (HTTP 401, 404, …) surfaces as ``WebSocketSeamError/upgradeRejected(_:)`` without the
///   HTTP status code.
/// - Inbound frames are buffered by NIO up to its async-channel high watermark (10 frames) before reading pauses;
///   this connector adds no buffer of its own.
public struct NIOWebSocketConnector: WebSocketConnector {
    /// The default limit for one frame and for one reassembled message: 2 MiB. AppSync events are at most 240 KB
    /// and one message about 1.3 MB; WSClient's own default (16 KiB) would reject them.
    public static let defaultMaxSize = 2 * 1024 * 1024

    /// The largest frame accepted from the server; larger outgoing messages are split into frames of this size.
    public var maxFrameSize: Int
    /// The largest message (all fragments joined) accepted from the server.
    public var maxMessageSize: Int
    /// How long a closing handshake may take before the connection is dropped. Default 1 s: a peer that does not
    /// answer a close within a second is not worth waiting for.
    public var closeTimeout: Duration
    /// TLS settings for `wss://`; `nil` uses NIOSSL's default client configuration (system trust roots).
    public var tlsConfiguration: TLSConfiguration?
    /// The event loops the connections run on.
    public var eventLoopGroup: any EventLoopGroup
    /// Where connection events are logged (at debug and trace level). Header values and subprotocols are never
    /// logged: they carry credentials.
    public var logger: Logger

    /// Creates a connector.
    ///
    /// - Parameters:
    ///   - maxFrameSize: The largest frame accepted from the server, in bytes.
    ///   - maxMessageSize: The largest reassembled message accepted from the server, in bytes.
    ///   - closeTimeout: How long the closing handshake at the end of a scope waits for the server's close frame.
    ///   - tlsConfiguration: TLS settings for `wss://`; `nil` for NIOSSL's default client configuration.
    ///   - eventLoopGroup: The event loops to run on.
    ///   - logger: The logger for connection events.
    public init(
        maxFrameSize: Int = NIOWebSocketConnector.defaultMaxSize,
        maxMessageSize: Int = NIOWebSocketConnector.defaultMaxSize,
        closeTimeout: Duration = .seconds(1),
        tlsConfiguration: TLSConfiguration? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "vortex.websocket")
    ) {
        // Out-of-range sizes are clamped rather than trapping: a frame size must fit the protocol's 32-bit field.
        self.maxFrameSize = min(max(1, maxFrameSize), Int(UInt32.max))
        self.maxMessageSize = max(1, maxMessageSize)
        self.closeTimeout = closeTimeout
        self.tlsConfiguration = tlsConfiguration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Opens a connection, runs `body` while it is open, and ends it: after `body` returns, WSClient's closing
    /// handshake waits at most ``closeTimeout`` for the server; after ``WebSocketConnection/abort()`` the socket is
    /// dropped at once.
    ///
    /// - Throws: ``WebSocketSeamError/invalidURL(_:)`` for a URL that is not `ws://` or `wss://`,
    ///   ``WebSocketSeamError/connectionFailed(_:)`` when TCP, TLS or DNS fail,
    ///   ``WebSocketSeamError/upgradeRejected(_:)`` when the server does not switch protocols, what `body` threw,
    ///   and `CancellationError` when the calling task is cancelled first.
    public func withConnection<Value: Sendable>(
        _ request: WebSocketRequest,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        let endpoint = try WebSocketEndpoint(request.url)
        let closedLocally = Locked<Bool>(false)
        let unrequestedClose = OneShotSignal<UInt16>()
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: maxFrameSize,
            additionalHeaders: try upgradeHeaders(for: request),
            extensions: [
                .nonNegotiatedExtension { UnrequestedCloseWatch(closedLocally: closedLocally, unrequestedClose: unrequestedClose) }
            ],
            closeTimeout: closeTimeout
        )
        logger.debug(
            "Opening WebSocket",
            metadata: ["ws.endpoint": "\(endpoint.redacted)", "ws.subprotocol.count": "\(request.subprotocols.count)"]
        )
        let outcome = Locked<Result<Value, any Error>?>(nil)
        let abort = OneShotSignal<Void>()
        let bodyStarted = OneShotSignal<Void>()
        let bodyEnded = OneShotSignal<Void>()
        let ran = OneShotSignal<Result<WebSocketCloseFrame?, any Error>>()
        let ended: Result<WebSocketCloseFrame?, any Error>? = await {
            // WSClient's run() owns the socket. It runs in a task of its own only because a stalled upgrade does not
            // react to cancellation (it awaits a NIO future): this scope can then give up on it instead of hanging.
            // Once the scope has started, it is always cancelled and awaited before this function returns.
            let runTask = Task { [tlsConfiguration, eventLoopGroup, logger, maxMessageSize] in
                let client = WebSocketClient(
                    url: endpoint.urlString,
                    configuration: configuration,
                    tlsConfiguration: tlsConfiguration,
                    eventLoopGroup: eventLoopGroup,
                    logger: logger
                ) { inbound, outbound, _ in
                    // An upgrade that completes after the scope gave up on it runs nothing.
                    guard !abort.isFired else { return }
                    bodyStarted.fire()
                    let connection = NIOWebSocketConnection(
                        inbound: inbound, outbound: outbound, maxMessageSize: maxMessageSize,
                        closedLocally: closedLocally, unrequestedClose: unrequestedClose, abort: abort)
                    let result: Result<Value, any Error>
                    do { result = .success(try await body(connection)) } catch { result = .failure(error) }
                    outcome.withLock { $0 = result }
                    bodyEnded.fire()
                }
                do { ran.fire(.success(try await client.run())) } catch { ran.fire(.failure(error)) }
            }
            return await withTaskCancellationHandler {
                await withTaskGroup(of: ScopeStep.self) { group in
                    group.addTask {
                        guard let result = await ran.wait() else { return .cancelled }
                        return .ran(result)
                    }
                    // Abort: the link is known to be dead; cancelling WSClient shuts the channel without a handshake.
                    group.addTask {
                        guard await abort.wait() != nil else { return .cancelled }
                        return .aborted
                    }
                    // Backstop: WSClient bounds the handshake it starts by closeTimeout, but after a close the peer
                    // started it reads until the peer drops the TCP connection, and a peer may never do that. So the
                    // scope never waits more than closeTimeout for the peer once the body has returned.
                    group.addTask { [closeTimeout] in
                        guard await bodyEnded.wait() != nil else { return .cancelled }
                        do { try await Task.sleep(for: closeTimeout) } catch { return .cancelled }
                        return .aborted
                    }
                    var result: Result<WebSocketCloseFrame?, any Error>?
                    while let step = await group.next() {
                        switch step {
                        case .ran(let ended):
                            result = ended
                            group.cancelAll()
                        case .aborted:
                            runTask.cancel()
                            // A scope that started ends promptly once cancelled; a stalled upgrade is given up.
                            if !bodyStarted.isFired || bodyEnded.isFired { group.cancelAll() }
                        case .cancelled:
                            break
                        }
                    }
                    return result
                }
            } onCancel: {
                runTask.cancel()
                abort.fire()
            }
        }()
        let aborted = abort.isFired
        switch (outcome.withLock { $0 }, ended) {
        case (nil, .failure(let error)?):
            logger.debug("WebSocket did not open", metadata: ["ws.endpoint": "\(endpoint.redacted)", "ws.error": "\(error)"])
            throw Self.seamError(for: error)
        case (nil, _):
            if Task.isCancelled { throw CancellationError() }
            if abort.isFired { throw WebSocketSeamError.connectionFailed("the WebSocket upgrade was abandoned") }
            throw WebSocketSeamError.connectionFailed("the connection ended during the upgrade")
        case (.failure(let error)?, _):
            throw error
        case (.success(let value)?, let ended):
            let info: WebSocketCloseInfo
            let local = closedLocally.withLock { $0 }
            switch ended {
            case _ where aborted:
                info = WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true)
            case .success(let frame?)?:
                info = WebSocketCloseInfo(
                    code: UInt16(webSocketErrorCode: frame.closeCode), reason: frame.reason ?? "", initiatedLocally: local)
            case .success(nil)?, nil:
                if let code = unrequestedClose.value, !local {
                    info = WebSocketCloseInfo(code: code, reason: "the WebSocket layer failed the connection", initiatedLocally: true)
                } else {
                    info = WebSocketCloseInfo(code: nil, reason: "connection closed without a close code", initiatedLocally: local)
                }
            case .failure(let error)?:
                info = WebSocketCloseInfo(code: nil, reason: "\(error)", initiatedLocally: local)
            }
            logger.debug("WebSocket closed", metadata: ["ws.close": "\(info)"])
            return WebSocketScopeResult(value: value, close: info)
        }
    }

    private enum ScopeStep: Sendable {
        case ran(Result<WebSocketCloseFrame?, any Error>)
        case aborted
        case cancelled
    }

    /// The seam error for a failure of WSClient's `run()` before the upgrade completed.
    static func seamError(for error: any Error) -> any Error {
        switch error {
        case let error as WebSocketSeamError:
            return error
        case is CancellationError:
            return error
        case let error as WebSocketClientError where error == .webSocketUpgradeFailed:
            return WebSocketSeamError.upgradeRejected(
                "the server answered without switching protocols (\(error); WSClient does not expose the HTTP status)"
            )
        case let error as WebSocketClientError where error == .invalidURL:
            return WebSocketSeamError.invalidURL("\(error)")
        case let error as NIOHTTPClientUpgradeError:
            return WebSocketSeamError.upgradeRejected("invalid upgrade response: \(error)")
        default:
            return WebSocketSeamError.connectionFailed("\(error)")
        }
    }

    /// The upgrade request's extra headers: the offered subprotocols, then the request's headers in order.
    private func upgradeHeaders(for request: WebSocketRequest) throws -> HTTPFields {
        var fields = HTTPFields()
        if !request.subprotocols.isEmpty {
            fields.append(HTTPField(name: .secWebSocketProtocol, value: request.subprotocols.joined(separator: ", ")))
        }
        for header in request.headers {
            guard let name = HTTPField.Name(header.name) else {
                throw WebSocketSeamError.connectionFailed("invalid HTTP header field name \"\(header.name)\"")
            }
            // WSClient always sends these from the URL; a second copy would make the request invalid.
            if name.canonicalName == "host" || name.canonicalName == "origin" {
                logger.debug("Not sending header set by WSClient", metadata: ["ws.header": "\(name)"])
                continue
            }
            fields.append(HTTPField(name: name, value: header.value))
        }
        return fields
    }
}

/// A validated `ws://` or `wss://` URL in the form WSClient parses.
private struct WebSocketEndpoint: Sendable {
    /// The URL handed to WSClient (scheme lowercased).
    let urlString: String
    /// Scheme, host, port and path only: queries may carry credentials, so they are never logged.
    let redacted: String

    init(_ url: URL) throws {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else {
            throw WebSocketSeamError.invalidURL("no scheme or host in \(Self.redact(url))")
        }
        guard scheme == "ws" || scheme == "wss" else {
            throw WebSocketSeamError.invalidURL("scheme \"\(scheme)\" is not ws or wss in \(Self.redact(url))")
        }
        components.scheme = scheme
        guard let urlString = components.string else {
            throw WebSocketSeamError.invalidURL(Self.redact(url))
        }
        self.urlString = urlString
        self.redacted = Self.redact(url)
    }

    static func redact(_ url: URL) -> String {
        let port = url.port.map { ":\($0)" } ?? ""
        return "\(url.scheme ?? "?")://\(url.host ?? "?")\(port)\(url.path)"
    }
}
