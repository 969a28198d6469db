#if canImport(Darwin) || canImport(FoundationNetworking)
import Foundation
import Logging
import SubscriberCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Opens WebSocket connections with `URLSessionWebSocketTask`, through the ``WebSocketTask`` seam.
///
/// Default connector per platform: `Composition` uses this connector on Apple platforms (no SwiftNIO in the app) and
/// `NIOWebSocketConnector` (module `WebSocketNIO`) elsewhere.
/// - **iOS, macOS, tvOS, visionOS**: each connection runs a `URLSessionWebSocketTask` in a `URLSession` of its own
///   (made with ``makeSessionConfiguration``), unless ``makeTask`` supplies the task.
/// - **watchOS**: Apple's TN3135 ("Low-level networking on watchOS") rules out `URLSessionWebSocketTask` for ordinary
///   watchOS apps, so without ``makeTask`` every connection fails at once with
///   ``WebSocketSeamError/unsupportedPlatform(_:)`` citing it, instead of waiting for a path that cannot come.
/// - **Linux and other platforms with FoundationNetworking**: the type compiles (so CI type-checks it), but
///   FoundationNetworking's libcurl backend has no WebSocket client, so without ``makeTask`` every connection fails at
///   once with ``WebSocketSeamError/unsupportedPlatform(_:)``. Use `NIOWebSocketConnector` there.
///
/// Subprotocols are offered the way URLSession expects, through `webSocketTask(with:protocols:)` (a hand-set
/// `Sec-WebSocket-Protocol` header would make `urlSession(_:webSocketTask:didOpenWithProtocol:)` report `nil`); the
/// request's headers go in the session configuration's `httpAdditionalHeaders` (the session is the connection's own;
/// `URLSessionWebSocketTask` has no initializer that takes both a request and protocols). Apple reserves a few headers
/// there (`Authorization`, `Connection`, `Host`, …) and may override them: neither transport sends upgrade headers
/// (AppSync's authorization rides in the `header-` subprotocol, GraphQL's in `connection_init`).
/// The server's choice is checked against ``WebSocketRequest/requiredSubprotocol`` before the scope runs and reported
/// as ``WebSocketConnection/negotiatedSubprotocol``. An upgrade refused with HTTP 401 or 403 surfaces as
/// ``WebSocketSeamError/upgradeRejected(_:)`` starting `"HTTP 401"`/`"HTTP 403"`, so
/// ``WebSocketSeamError/isAuthenticationRejection`` holds.
///
/// Ending: a task's `receive()` and `send(_:)` ignore Swift cancellation. A cancelled caller of `receive()` returns at
/// once and the task stays open, so the close that follows still sends its code (`cancel()` would send a close frame
/// without one); a cancelled caller of `send(_:)` sends the close frame with 1000 and drops the task. A receive is asked through ``WebSocketTask/receive(completionHandler:)`` and also
/// ends at the task's end, since CFNetwork does not complete a pending receive when the connection fails without a close
/// frame (WebKit PR #28392); a message handed over just after the end is still taken for a quarter of a second. A send
/// is asked through ``WebSocketTask/send(_:completionHandler:)`` and throws at the task's end, for the same reason
/// (moozzyk/SignalR-Client-Swift #226); after the end it throws at once. ``WebSocketConnection/close(code:reason:)`` sends the close frame and waits at most
/// ``closeTimeout`` for the task to end before dropping it; when the scope's closure returns, a connection it neither
/// closed nor aborted is closed the same way. ``WebSocketConnection/abort()`` drops the task at once and nothing is
/// awaited. A caller cancelled while the upgrade is pending gets `CancellationError` at once, even from a task that
/// ignores cancellation.
///
/// Backpressure: `receive()` asks the task for one message at a time; whatever URLSession buffers below that is
/// outside this type's control.
public struct URLSessionWebSocketConnector: WebSocketConnector {
    /// The default limit for one inbound message: 2 MiB (AppSync messages reach about 1.3 MB; URLSession's own
    /// default is 1 MiB).
    public static let defaultMaxMessageSize = 2 * 1024 * 1024

    /// Whether this platform can run the default `URLSessionWebSocketTask`: Apple platforms but watchOS.
    public static var supportsURLSessionWebSocketTasks: Bool { unsupportedPlatformReason == nil }

    /// Why the default task cannot run on this platform, or `nil` where it can.
    static var unsupportedPlatformReason: String? {
        #if os(watchOS)
        "URLSessionWebSocketTask is not available to ordinary watchOS apps (Apple TN3135, \"Low-level networking on "
            + "watchOS\": only during an active audio-streaming session, a CallKit VoIP call or DeviceDiscoveryUI)"
        #elseif canImport(Darwin)
        nil
        #else
        "URLSessionWebSocketConnector needs URLSessionWebSocketTask, and FoundationNetworking's libcurl backend has no "
            + "WebSocket support; use NIOWebSocketConnector on this platform"
        #endif
    }

    /// The largest message accepted from the server (default tasks only).
    public var maxMessageSize: Int
    /// How long the end of a scope waits for the task to end after the close frame was sent. Default 1 s, as for
    /// `NIOWebSocketConnector`.
    public var closeTimeout: Duration
    /// Makes the configuration of the `URLSession` created for each connection (default tasks only).
    public var makeSessionConfiguration: @Sendable () -> URLSessionConfiguration
    /// Makes the task for each connection from the connection's request (URL, offered subprotocols, headers); `nil`
    /// for a `URLSessionWebSocketTask`, which only Apple platforms support. Tests inject a mock task here.
    public var makeTask: (@Sendable (WebSocketRequest) -> any WebSocketTask)?
    /// Where connection events are logged. Header values and subprotocols are never logged: they carry credentials.
    public var logger: Logger
    /// How long a receive waits for the task's answer after the task's end (tests lengthen it to rule out timing).
    var receiveGraceAfterEnd = URLSessionWebSocketConnection.defaultReceiveGrace

    /// The session configuration each connection gets unless ``makeSessionConfiguration`` says otherwise: a new
    /// ephemeral one with no cookie storage, no cookies set on the upgrade, no credential storage and no cache. A
    /// `URLSessionWebSocketTask` attaches the session's cookies to its handshake, stores the server's `Set-Cookie` and
    /// calls the authentication delegate methods (Apple's `URLSessionWebSocketTask` overview); the transports carry
    /// their own authorization, and nothing of the app's HTTP state should ride on the upgrade or be kept from it.
    public static func defaultSessionConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.urlCache = nil
        return configuration
    }

    /// Creates a connector.
    ///
    /// - Parameters:
    ///   - maxMessageSize: The largest message accepted from the server, in bytes (default tasks only).
    ///   - closeTimeout: How long the end of a scope waits for the closing handshake.
    ///   - makeSessionConfiguration: Makes the session configuration for each connection (default
    ///     ``defaultSessionConfiguration()``: ephemeral, no cookies, credentials or cache). The connector adds the
    ///     request's headers to a copy, so a shared instance may be returned.
    ///   - logger: The logger for connection events.
    ///   - makeTask: Makes the task for each connection; `nil` (the default) for a `URLSessionWebSocketTask`.
    public init(
        maxMessageSize: Int = URLSessionWebSocketConnector.defaultMaxMessageSize,
        closeTimeout: Duration = .seconds(1),
        makeSessionConfiguration: @escaping @Sendable () -> URLSessionConfiguration = {
            URLSessionWebSocketConnector.defaultSessionConfiguration()
        },
        logger: Logger = Logger(label: "vortex.websocket"),
        makeTask: (@Sendable (WebSocketRequest) -> any WebSocketTask)? = nil
    ) {
        self.maxMessageSize = max(1, maxMessageSize)
        self.closeTimeout = closeTimeout
        self.makeSessionConfiguration = makeSessionConfiguration
        self.logger = logger
        self.makeTask = makeTask
    }

    /// Opens a connection, runs `body` while it is open, and ends it: a scope that neither closed nor aborted closes
    /// with 1000; the end waits at most ``closeTimeout`` for the task to end; after an abort nothing is awaited.
    ///
    /// - Throws: ``WebSocketSeamError/unsupportedPlatform(_:)`` without ``makeTask`` on a platform without
    ///   `URLSessionWebSocketTask` support, ``WebSocketSeamError/invalidURL(_:)`` for a URL that is not `ws://` or
    ///   `wss://`, ``WebSocketSeamError/upgradeRejected(_:)`` (with the HTTP status) or
    ///   ``WebSocketSeamError/connectionFailed(_:)`` when the connection does not open,
    ///   ``WebSocketSeamError/subprotocolNotSelected(required:selected:)`` when the server did not select the
    ///   request's required subprotocol, what `body` threw, and `CancellationError` when the calling task is cancelled
    ///   before the connection opened.
    public func withConnection<Value: Sendable>(
        _ request: WebSocketRequest,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        let endpoint = try WebSocketURL(request.url).redacted
        let factory = try taskFactory()
        let task = factory(request)
        logger.debug(
            "Opening WebSocket",
            metadata: ["ws.endpoint": "\(endpoint)", "ws.subprotocol.count": "\(request.subprotocols.count)"]
        )

        let subprotocol: String?
        do {
            subprotocol = try await Self.open(task)
            do { try request.checkSelectedSubprotocol(subprotocol) } catch {
                task.cancel()
                throw error
            }
        } catch {
            logger.debug("WebSocket did not open", metadata: ["ws.endpoint": "\(endpoint)", "ws.error": "\(error)"])
            throw error
        }

        let connection = URLSessionWebSocketConnection(
            task: task, negotiatedSubprotocol: subprotocol, closeTimeout: closeTimeout, receiveGrace: receiveGraceAfterEnd,
            logger: logger)
        // The task's end is awaited from a task of its own, so a scope's bounded wait never depends on the task
        // honouring cancellation; the end also releases a receive CFNetwork never answers (WebKit PR #28392).
        let watcher = Task {
            let info = await task.completion()
            // Cancelled: the scope is over, and `completion()` only said "no longer awaited".
            if !Task.isCancelled { connection.taskEnded(info) }
        }
        defer { watcher.cancel() }

        let result: Result<Value, any Error>
        do { result = .success(try await body(connection)) } catch { result = .failure(error) }
        let close = await connection.end()
        logger.debug("WebSocket closed", metadata: ["ws.endpoint": "\(endpoint)", "ws.close": "\(close)"])
        return WebSocketScopeResult(value: try result.get(), close: close)
    }

    /// The factory for this platform, or the error that makes connecting impossible here.
    private func taskFactory() throws -> @Sendable (WebSocketRequest) -> any WebSocketTask {
        if let makeTask { return makeTask }
        if let reason = Self.unsupportedPlatformReason { throw WebSocketSeamError.unsupportedPlatform(reason) }
        return { [maxMessageSize, makeSessionConfiguration] request in
            URLSessionWebSocketTaskAdapter(
                request: request, configuration: makeSessionConfiguration(), maxMessageSize: maxMessageSize)
        }
    }

    /// Resumes `task` and waits for the upgrade. The task's `resume()` runs in a task of its own so a cancelled
    /// caller returns at once, even while a stalled upgrade ignores cancellation (the task is cancelled as well).
    private static func open(_ task: any WebSocketTask) async throws -> String? {
        let opened = OneShotSignal<Result<String?, any Error>>()
        let opener = Task {
            do { opened.fire(.success(try await task.resume())) } catch { opened.fire(.failure(error)) }
        }
        let outcome = await withTaskCancellationHandler {
            await opened.wait()
        } onCancel: {
            opener.cancel()
            task.cancel()
        }
        guard let outcome, !Task.isCancelled else {
            task.cancel()
            throw CancellationError()
        }
        switch outcome {
        case .success(let subprotocol):
            return subprotocol.flatMap { $0.isEmpty ? nil : $0 }
        case .failure(let error as WebSocketSeamError):
            task.cancel()
            throw error
        case .failure(let error):
            task.cancel()
            throw WebSocketSeamError.connectionFailed(describeWithoutRequest(error))
        }
    }
}

/// A task's error in words that never include the request: a `URLError`'s full description carries the failing URL,
/// whose query may hold credentials, so only seam errors and localized descriptions are used. A `URLError` also gets
/// its code (`Could not connect to the server. (URLError -1004)`): its description is in the device's language, and
/// support staff read `networkError` in theirs.
func describeWithoutRequest(_ error: any Error) -> String {
    if let error = error as? WebSocketSeamError { return error.description }
    if let error = error as? URLError { return "\(error.localizedDescription) (URLError \(error.code.rawValue))" }
    return error.localizedDescription
}

// MARK: - The connection
#endif
