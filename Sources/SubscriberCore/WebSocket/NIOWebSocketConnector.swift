import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
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
    /// How long a closing handshake may take before the connection is dropped.
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
    ///   - closeTimeout: How long ``WebSocketConnection/close(code:reason:)`` waits for the server's close frame.
    ///   - tlsConfiguration: TLS settings for `wss://`; `nil` for NIOSSL's default client configuration.
    ///   - eventLoopGroup: The event loops to run on.
    ///   - logger: The logger for connection events.
    public init(
        maxFrameSize: Int = NIOWebSocketConnector.defaultMaxSize,
        maxMessageSize: Int = NIOWebSocketConnector.defaultMaxSize,
        closeTimeout: Duration = .seconds(5),
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

    /// Connects and returns once the server has accepted the WebSocket upgrade.
    ///
    /// - Throws: ``WebSocketSeamError/invalidURL(_:)`` for a URL that is not `ws://` or `wss://`,
    ///   ``WebSocketSeamError/connectionFailed(_:)`` when TCP, TLS or DNS fail,
    ///   ``WebSocketSeamError/upgradeRejected(_:)`` when the server does not switch protocols, and
    ///   `CancellationError` when the calling task is cancelled first.
    public func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        let endpoint = try WebSocketEndpoint(request.url)
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: maxFrameSize,
            additionalHeaders: try upgradeHeaders(for: request),
            closeTimeout: closeTimeout
        )
        let session = NIOWebSocketSession(maxMessageSize: maxMessageSize, logger: logger)
        logger.debug(
            "Opening WebSocket",
            metadata: ["ws.endpoint": "\(endpoint.redacted)", "ws.subprotocol.count": "\(request.subprotocols.count)"]
        )
        // The task owns WSClient's run(): it lives as long as the connection and is cancelled by the connection.
        let runTask = Task { [tlsConfiguration, eventLoopGroup, logger] in
            let client = WebSocketClient(
                url: endpoint.urlString,
                configuration: configuration,
                tlsConfiguration: tlsConfiguration,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            ) { inbound, outbound, _ in
                try await session.serve(inbound: inbound, outbound: outbound)
            }
            let result: Result<WebSocketCloseFrame?, any Error>
            do {
                result = .success(try await client.run())
            } catch {
                result = .failure(error)
            }
            session.runEnded(result)
        }
        let upgrade = await withTaskCancellationHandler {
            await session.upgradeOutcome()
        } onCancel: {
            session.abandonUpgrade()
        }
        do {
            try upgrade.get()
        } catch {
            runTask.cancel()
            logger.debug("WebSocket did not open", metadata: ["ws.endpoint": "\(endpoint.redacted)", "ws.error": "\(error)"])
            throw error
        }
        logger.debug("WebSocket open", metadata: ["ws.endpoint": "\(endpoint.redacted)"])
        return NIOWebSocketConnection(session: session, runTask: runTask, closeTimeout: closeTimeout)
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
