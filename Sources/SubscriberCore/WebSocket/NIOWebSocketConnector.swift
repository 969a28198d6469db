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
/// - The upgrade response is not exposed, so ``NIOWebSocketConnection/negotiatedSubprotocol`` is always `nil`
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
        precondition(maxFrameSize > 0 && maxFrameSize <= Int(UInt32.max), "maxFrameSize must fit a WebSocket frame")
        precondition(maxMessageSize > 0, "maxMessageSize must be positive")
        self.maxFrameSize = maxFrameSize
        self.maxMessageSize = maxMessageSize
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

/// A connection opened by ``NIOWebSocketConnector``.
///
/// Owns the task running WSClient. Dropping the last reference without ``close(code:reason:)`` ends the connection
/// with a normal close (1000); the task is cancelled if that handshake does not finish within the close timeout.
final class NIOWebSocketConnection: WebSocketConnection {
    private let session: NIOWebSocketSession
    private let runTask: Task<Void, Never>
    private let closeTimeout: Duration

    init(session: NIOWebSocketSession, runTask: Task<Void, Never>, closeTimeout: Duration) {
        self.session = session
        self.runTask = runTask
        self.closeTimeout = closeTimeout
    }

    deinit {
        // Cancelling right away would make WSClient drop the socket without a close frame (its cancellation
        // handler shuts the input and writes fail), so let the handler return normally first.
        session.connectionDropped(runTask: runTask, deadline: closeTimeout + .seconds(1))
    }

    /// Always `nil`: WSClient does not expose the upgrade response, so the server's choice cannot be verified.
    var negotiatedSubprotocol: String? { nil }

    /// The next message, read from the socket only now (no read-ahead in this layer).
    ///
    /// Cancelling a waiting `receive()` ends the connection: NIO finishes the inbound stream when its reader is
    /// cancelled. WSClient then closes with 1000 and `receive()` reports a local close.
    func receive() async -> WebSocketInboundEvent {
        await session.receive()
    }

    /// Sends a text or binary message; throws ``WebSocketSeamError/notConnected`` once closing has begun.
    func send(_ message: WebSocketMessage) async throws {
        try await session.send(message)
    }

    /// Sends a close frame and waits for the close handshake, at most about `closeTimeout`.
    func close(code: UInt16, reason: String) async {
        let session = session
        let runTask = runTask
        let closeTimeout = closeTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await session.close(code: code, reason: reason)
            }
            // Backstop: WSClient's own close timeout only starts once our handler has returned, and a silent
            // server (or a hung TLS shutdown) must not keep the caller waiting. Woken early when the close is done
            // (group cancelled) or when the caller is cancelled.
            group.addTask {
                try? await Task.sleep(for: closeTimeout)
                guard !session.isFinished else { return }
                session.logger.debug("WebSocket close handshake did not finish in time; dropping the connection")
                runTask.cancel()
                session.finishLocally()
            }
            _ = await group.next()
            group.cancelAll()
        }
    }
}

/// The state shared by a connection, the WSClient handler and the task running WSClient.
///
/// WSClient calls our handler with the inbound stream and the outbound writer once the upgrade has succeeded; the
/// handler hands both over and suspends until the connection is done with them (`handlerExit`). Returning from the
/// handler lets WSClient finish the close handshake, after which `run()` returns the server's close frame.
final class NIOWebSocketSession: Sendable {
    /// Where the connection is in its life.
    private enum Phase {
        /// Waiting for the upgrade.
        case connecting
        /// Upgraded; messages flow both ways.
        case open
        /// ``close(code:reason:)`` has started; `frameSent` once our close frame is written.
        case closing(code: UInt16, reason: String, frameSent: Bool)
        /// The inbound stream ended (server close, EOF or error); waiting for `run()` to return.
        case ending
        /// `run()` returned (or the close was forced); every receive reports this.
        case finished(WebSocketCloseInfo)
    }

    /// How the suspended WSClient handler should return.
    private enum HandlerExit: Sendable {
        case normal
        case failed(any Error)
    }

    private typealias MessageIterator = WebSocketInboundMessageStream.AsyncIterator

    private struct State {
        var phase = Phase.connecting
        var outbound: WebSocketOutboundWriter?
        /// The single iterator over the inbound messages. `nil` while a `receive()` has it checked out, and for
        /// good once the stream ended or closing began. The iterator is not `Sendable`; it is only ever used by
        /// one `receive()` at a time (the seam's single-consumer contract, enforced by `readerActive`) and moved
        /// in and out of this lock-protected state, never shared.
        var iterator: MessageIterator?
        /// Whether a `receive()` is awaiting the iterator right now.
        var readerActive = false
        /// Why the inbound stream failed, kept for the close reason when `run()` itself reports nothing.
        var inboundError: (any Error)?
        /// Cancels the run task if a dropped connection does not finish in time; cancelled when `run()` returns.
        var dropWatchdog: Task<Void, Never>?
    }

    /// The logger given to the connector.
    let logger: Logger
    private let maxMessageSize: Int
    private let state = Locked(State())
    private let upgraded = WebSocketOneShot<Result<Void, any Error>>()
    private let handlerExit = WebSocketOneShot<HandlerExit>()
    private let finished = WebSocketOneShot<WebSocketCloseInfo>()

    init(maxMessageSize: Int, logger: Logger) {
        self.maxMessageSize = maxMessageSize
        self.logger = logger
    }

    /// Whether the connection has ended for good.
    var isFinished: Bool { finished.isFulfilled }

    // MARK: Connect

    /// Waits until the upgrade succeeded or failed.
    func upgradeOutcome() async -> Result<Void, any Error> {
        await upgraded.value
    }

    /// `connect` was cancelled: fail it now rather than waiting for NIO to notice.
    func abandonUpgrade() {
        upgraded.fulfill(.failure(CancellationError()))
    }

    /// The WSClient handler: takes over the streams, then suspends until the connection is finished with them.
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let iterator = inbound.messages(maxSize: maxMessageSize).makeAsyncIterator()
        state.withLock { state in
            state.outbound = outbound
            state.iterator = iterator
            if case .connecting = state.phase { state.phase = .open }
        }
        // If `connect` already gave up, nobody will ever use this connection: end it at once.
        guard upgraded.fulfill(.success(())) else { return }
        // Cancellation (the connection was dropped) ends the handler normally: WSClient then sends 1000.
        let exit = await withTaskCancellationHandler {
            await handlerExit.value
        } onCancel: {
            handlerExit.fulfill(.normal)
        }
        if case .failed(let error) = exit {
            // Rethrown so WSClient closes with the matching code (for example 1009 for an oversized message).
            throw error
        }
    }

    /// `run()` returned or threw: the connection is over.
    func runEnded(_ result: Result<WebSocketCloseFrame?, any Error>) {
        switch result {
        case .failure(let error):
            upgraded.fulfill(.failure(Self.seamError(for: error)))
        case .success:
            upgraded.fulfill(.failure(WebSocketSeamError.connectionFailed("the connection ended during the upgrade")))
        }
        let info = state.withLock { state -> WebSocketCloseInfo in
            switch state.phase {
            case .finished(let info):
                return info
            case .closing(let code, let reason, _):
                state.phase = .finished(WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true))
            case .connecting, .open, .ending:
                state.phase = .finished(Self.remoteCloseInfo(result, inboundError: state.inboundError))
            }
            state.outbound = nil
            state.iterator = nil
            state.dropWatchdog?.cancel()
            state.dropWatchdog = nil
            guard case .finished(let info) = state.phase else { preconditionFailure("phase was just set") }
            return info
        }
        handlerExit.fulfill(.normal)
        if finished.fulfill(info) {
            logger.debug("WebSocket closed", metadata: ["ws.close": "\(info)"])
        }
    }

    /// The connection object went away without `close`: let WSClient close normally, and cancel the run task if
    /// that takes longer than `deadline`. No receive() can be running (it would keep the connection alive).
    func connectionDropped(runTask: Task<Void, Never>, deadline: Duration) {
        guard !isFinished else { return }
        logger.debug("WebSocket connection dropped without close; closing it")
        let watchdog = Task { [logger] in
            do {
                try await Task.sleep(for: deadline)
            } catch {
                return  // run() ended in time
            }
            logger.debug("Dropped WebSocket did not close in time; cancelling it")
            runTask.cancel()
        }
        let alreadyEnded = state.withLock { state -> Bool in
            if case .finished = state.phase { return true }
            state.dropWatchdog = watchdog
            return false
        }
        if alreadyEnded { watchdog.cancel() }
        handlerExit.fulfill(.normal)
    }

    /// Ends the connection without waiting any longer for WSClient (the close watchdog fired).
    func finishLocally() {
        let info = state.withLock { state -> WebSocketCloseInfo in
            let info: WebSocketCloseInfo
            switch state.phase {
            case .finished(let existing):
                return existing
            case .closing(let code, let reason, _):
                info = WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true)
            case .connecting, .open, .ending:
                info = WebSocketCloseInfo(code: nil, reason: "closed before the connection finished", initiatedLocally: true)
            }
            state.phase = .finished(info)
            state.outbound = nil
            state.iterator = nil
            return info
        }
        handlerExit.fulfill(.normal)
        finished.fulfill(info)
    }

    // MARK: The seam

    func receive() async -> WebSocketInboundEvent {
        let checkedOut = state.withLock { state -> MessageIterator? in
            guard case .open = state.phase, !state.readerActive, let iterator = state.iterator else { return nil }
            state.iterator = nil
            state.readerActive = true
            return iterator
        }
        // Not open (closing, ended, finished): all that is left is the final close.
        guard var iterator = checkedOut else { return .closed(await finished.value) }

        // Reading only now is the backpressure: nothing is pulled from the socket before the caller asks.
        let outcome: Result<WebSocketInboundMessageStream.Element?, any Error>
        do {
            outcome = .success(try await iterator.next())
        } catch {
            outcome = .failure(error)
        }
        let exit = state.withLock { state -> HandlerExit? in
            state.readerActive = false
            switch outcome {
            case .success(.some):
                if case .open = state.phase {
                    state.iterator = iterator
                    return nil
                }
                // `close` is waiting for this read to end before it lets the handler return.
                if case .closing(_, _, true) = state.phase { return .normal }
                return nil
            case .success(.none):
                if case .open = state.phase { state.phase = .ending }
                return .normal
            case .failure(let error) where error is CancellationError || Task.isCancelled:
                // NIO ends the inbound stream for good when its reader is cancelled, so the connection cannot
                // go on: close it normally and report that this side ended it.
                if case .open = state.phase {
                    state.phase = .closing(code: 1000, reason: "receive() was cancelled", frameSent: true)
                }
                return .normal
            case .failure(let error):
                if case .open = state.phase { state.phase = .ending }
                state.inboundError = error
                return .failed(error)
            }
        }
        if let exit { handlerExit.fulfill(exit) }
        switch outcome {
        case .success(.text(let text)?):
            return .message(.text(text))
        case .success(.binary(let buffer)?):
            return .message(.binary(Data(buffer.readableBytesView)))
        case .success(.none), .failure:
            return .closed(await finished.value)
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        let outbound = state.withLock { state -> WebSocketOutboundWriter? in
            guard case .open = state.phase else { return nil }
            return state.outbound
        }
        guard let outbound else { throw WebSocketSeamError.notConnected }
        do {
            // These split messages larger than maxFrameSize into continuation frames.
            switch message {
            case .text(let text):
                try await outbound.writeTextMessage(text)
            case .binary(let data):
                try await outbound.writeBinaryMessage(ByteBuffer(bytes: data))
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(error)"])
            throw WebSocketSeamError.notConnected
        }
    }

    func close(code: UInt16, reason: String) async {
        let outbound = state.withLock { state -> WebSocketOutboundWriter? in
            guard case .open = state.phase else { return nil }
            state.phase = .closing(code: code, reason: reason, frameSent: false)
            return state.outbound
        }
        if let outbound {
            logger.debug("Closing WebSocket", metadata: ["ws.close.code": "\(code)"])
            do {
                try await outbound.close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason.isEmpty ? nil : reason)
            } catch {
                // The transport may already be gone; the connection ends either way.
                logger.debug("Sending the WebSocket close frame failed", metadata: ["ws.error": "\(error)"])
            }
            // A receive() still awaiting the iterator lets the handler go when its read ends (the server's
            // close frame ends it); otherwise nobody reads any more and the handler can return now, after which
            // WSClient waits for the server's close frame itself (bounded by its close timeout).
            let releaseNow = state.withLock { state -> Bool in
                if case .closing = state.phase {
                    state.phase = .closing(code: code, reason: reason, frameSent: true)
                }
                return !state.readerActive
            }
            if releaseNow { handlerExit.fulfill(.normal) }
        }
        _ = await finished.value
    }

    // MARK: Mapping

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

    /// How the connection ended when this side did not start the close.
    private static func remoteCloseInfo(
        _ result: Result<WebSocketCloseFrame?, any Error>,
        inboundError: (any Error)?
    ) -> WebSocketCloseInfo {
        switch result {
        case .success(let frame?):
            return WebSocketCloseInfo(code: UInt16(webSocketErrorCode: frame.closeCode), reason: frame.reason ?? "")
        case .success(nil):
            if let inboundError { return WebSocketCloseInfo(code: nil, reason: "\(inboundError)") }
            return WebSocketCloseInfo(code: nil, reason: "connection closed without a close code")
        case .failure(let error):
            return WebSocketCloseInfo(code: nil, reason: "\(error)")
        }
    }
}

/// A value set once, awaited by any number of tasks.
private final class WebSocketOneShot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = Locked(State())

    /// Whether a value was set.
    var isFulfilled: Bool { state.withLock { $0.value != nil } }

    /// Sets the value if none was set yet; returns whether this call set it.
    @discardableResult
    func fulfill(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, once set.
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
