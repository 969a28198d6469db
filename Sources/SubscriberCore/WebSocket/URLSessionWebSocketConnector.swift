#if canImport(Darwin) || canImport(FoundationNetworking)
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - The task seam

/// One WebSocket client task, as ``URLSessionWebSocketConnector`` drives it: the small part of
/// `URLSessionWebSocketTask` the connector uses, so tests can play the server with a mock task (the pattern of
/// Apollo iOS's `WebSocketTask` and `MockWebSocketTask`).
///
/// The connector calls ``resume()`` once, then ``send(_:)`` and ``receive()`` while the connection is open, and ends
/// it with ``cancel(with:reason:)`` (closing handshake) or ``cancel()`` (drop). It awaits ``completion()`` from a
/// task of its own, and never for longer than its close timeout.
public protocol WebSocketTask: Sendable {
    /// Starts the task and waits for the server's answer to the upgrade request.
    ///
    /// - Returns: the subprotocol the server selected, or `nil` when it selected none.
    /// - Throws: ``WebSocketSeamError/upgradeRejected(_:)`` with the HTTP status first (`"HTTP 401"`) when the server
    ///   answered without switching protocols, ``WebSocketSeamError/connectionFailed(_:)`` when no answer came, or
    ///   `CancellationError`.
    func resume() async throws -> String?

    /// Sends one message. Throws once the task is closing or has ended.
    func send(_ message: WebSocketMessage) async throws

    /// The next complete message. Throws once the peer closed, the connection broke, or the task was cancelled
    /// (a pending call then throws at once).
    func receive() async throws -> WebSocketMessage

    /// Starts the closing handshake: sends a close frame with `closeCode` and `reason`. Reading ends.
    func cancel(with closeCode: Int, reason: Data?)

    /// Drops the connection at once, without a closing handshake. A pending ``receive()`` throws promptly.
    func cancel()

    /// Waits until the task has ended, and tells how: the peer's close code and reason when its close frame
    /// arrived, otherwise `code` `nil` and a description of the failure. `initiatedLocally` is ignored (the connector
    /// knows what it did itself).
    func completion() async -> WebSocketCloseInfo
}

// MARK: - The connector

/// Opens WebSocket connections with `URLSessionWebSocketTask`, through the ``WebSocketTask`` seam.
///
/// Default connector per platform: the transports and `Composition` default to ``NIOWebSocketConnector`` on every
/// platform. This connector is the one to pass on Apple platforms for a networking stack without SwiftNIO:
/// - **Apple platforms**: each connection runs a `URLSessionWebSocketTask` in a `URLSession` of its own (made with
///   ``makeSessionConfiguration``), unless ``makeTask`` supplies the task.
/// - **Linux and other platforms with FoundationNetworking**: the type compiles (so CI type-checks it), but
///   FoundationNetworking's libcurl backend has no WebSocket client, so without ``makeTask`` every connection fails at
///   once with ``WebSocketSeamError/unsupportedPlatform(_:)``. Use ``NIOWebSocketConnector`` there.
///
/// The upgrade request carries the offered subprotocols in one comma-separated `Sec-WebSocket-Protocol` header, then
/// the request's headers in order (URLSession may replace the ones it reserves, such as `Host`). The server's choice
/// of subprotocol is reported as ``WebSocketConnection/negotiatedSubprotocol``. An upgrade refused with HTTP 401 or
/// 403 surfaces as ``WebSocketSeamError/upgradeRejected(_:)`` starting `"HTTP 401"`/`"HTTP 403"`, so
/// ``WebSocketSeamError/isAuthenticationRejection`` holds.
///
/// Closing: ``WebSocketConnection/close(code:reason:)`` sends the close frame at once; when the scope's closure
/// returns, the connector waits at most ``closeTimeout`` for the task to end, then drops it.
/// ``WebSocketConnection/abort()`` drops the task at once and nothing is awaited. A caller cancelled while the upgrade
/// is pending gets `CancellationError` at once, even from a task that ignores cancellation.
///
/// Backpressure: `receive()` asks the task for one message at a time; whatever URLSession buffers below that is
/// outside this type's control.
public struct URLSessionWebSocketConnector: WebSocketConnector {
    /// The default limit for one inbound message: 2 MiB (AppSync messages reach about 1.3 MB; URLSession's own
    /// default is 1 MiB).
    public static let defaultMaxMessageSize = 2 * 1024 * 1024

    /// Whether this platform can run the default `URLSessionWebSocketTask` (Apple platforms only).
    public static var supportsURLSessionWebSocketTasks: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// The largest message accepted from the server (default tasks only).
    public var maxMessageSize: Int
    /// How long the end of a scope waits for the task to end after the close frame was sent. Default 1 s, as for
    /// ``NIOWebSocketConnector``.
    public var closeTimeout: Duration
    /// Makes the configuration of the `URLSession` created for each connection (default tasks only).
    public var makeSessionConfiguration: @Sendable () -> URLSessionConfiguration
    /// Makes the task for each connection from the upgrade request; `nil` for a `URLSessionWebSocketTask`, which only
    /// Apple platforms support. Tests inject a mock task here.
    public var makeTask: (@Sendable (URLRequest) -> any WebSocketTask)?
    /// Where connection events are logged. Header values and subprotocols are never logged: they carry credentials.
    public var logger: Logger

    /// Creates a connector.
    ///
    /// - Parameters:
    ///   - maxMessageSize: The largest message accepted from the server, in bytes (default tasks only).
    ///   - closeTimeout: How long the end of a scope waits for the closing handshake.
    ///   - makeSessionConfiguration: Makes the session configuration for each connection (default `.default`).
    ///   - logger: The logger for connection events.
    ///   - makeTask: Makes the task for each connection; `nil` (the default) for a `URLSessionWebSocketTask`.
    public init(
        maxMessageSize: Int = URLSessionWebSocketConnector.defaultMaxMessageSize,
        closeTimeout: Duration = .seconds(1),
        makeSessionConfiguration: @escaping @Sendable () -> URLSessionConfiguration = { .default },
        logger: Logger = Logger(label: "vortex.websocket"),
        makeTask: (@Sendable (URLRequest) -> any WebSocketTask)? = nil
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
    ///   ``WebSocketSeamError/connectionFailed(_:)`` when the connection does not open, what `body` threw, and
    ///   `CancellationError` when the calling task is cancelled before the connection opened.
    public func withConnection<Value: Sendable>(
        _ request: WebSocketRequest,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        let endpoint = try Self.redactedEndpoint(request.url)
        let factory = try taskFactory()
        let task = factory(Self.upgradeRequest(for: request))
        logger.debug(
            "Opening WebSocket",
            metadata: ["ws.endpoint": "\(endpoint)", "ws.subprotocol.count": "\(request.subprotocols.count)"]
        )

        let subprotocol: String?
        do {
            subprotocol = try await Self.open(task)
        } catch {
            logger.debug("WebSocket did not open", metadata: ["ws.endpoint": "\(endpoint)", "ws.error": "\(error)"])
            throw error
        }

        // The task's end is awaited from a task of its own, so a scope's bounded wait never depends on the task
        // honouring cancellation.
        let completed = OneShotSignal<WebSocketCloseInfo>()
        let watcher = Task {
            completed.fire(await task.completion())
        }
        defer { watcher.cancel() }

        let connection = URLSessionWebSocketConnection(
            task: task, negotiatedSubprotocol: subprotocol, completed: completed, logger: logger)
        let result: Result<Value, any Error>
        do { result = .success(try await body(connection)) } catch { result = .failure(error) }
        let close = await connection.end(closeTimeout: closeTimeout)
        logger.debug("WebSocket closed", metadata: ["ws.endpoint": "\(endpoint)", "ws.close": "\(close)"])
        return WebSocketScopeResult(value: try result.get(), close: close)
    }

    /// The factory for this platform, or the error that makes connecting impossible here.
    private func taskFactory() throws -> @Sendable (URLRequest) -> any WebSocketTask {
        if let makeTask { return makeTask }
        guard Self.supportsURLSessionWebSocketTasks else {
            throw WebSocketSeamError.unsupportedPlatform(
                "URLSessionWebSocketConnector needs URLSessionWebSocketTask, and FoundationNetworking's libcurl "
                    + "backend has no WebSocket support; use NIOWebSocketConnector on this platform"
            )
        }
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
            throw WebSocketSeamError.connectionFailed(describe(error))
        }
    }

    /// The upgrade request: the URL, the offered subprotocols in one header, then the request's headers in order.
    static func upgradeRequest(for request: WebSocketRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        if !request.subprotocols.isEmpty {
            urlRequest.setValue(request.subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        for header in request.headers {
            urlRequest.addValue(header.value, forHTTPHeaderField: header.name)
        }
        return urlRequest
    }

    /// Scheme, host, port and path of a `ws://` or `wss://` URL, for logs and errors: queries may carry credentials.
    private static func redactedEndpoint(_ url: URL) throws -> String {
        let port = url.port.map { ":\($0)" } ?? ""
        let redacted = "\(url.scheme ?? "?")://\(url.host ?? "?")\(port)\(url.path)"
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw WebSocketSeamError.invalidURL("no scheme or host in \(redacted)")
        }
        guard scheme == "ws" || scheme == "wss" else {
            throw WebSocketSeamError.invalidURL("scheme \"\(scheme)\" is not ws or wss in \(redacted)")
        }
        return redacted
    }
}

/// A task's error in words that never include the request: a `URLError`'s full description carries the failing URL,
/// whose query may hold credentials, so only seam errors and localized descriptions are used.
private func describe(_ error: any Error) -> String {
    (error as? WebSocketSeamError)?.description ?? error.localizedDescription
}

// MARK: - The connection

/// The connection ``URLSessionWebSocketConnector`` hands to a scope: a ``WebSocketTask``, alive exactly as long as
/// the scope's closure. The first end wins: the peer's close (seen by `receive()`), a local close, or an abort.
final class URLSessionWebSocketConnection: WebSocketConnection {
    private enum End: Sendable {
        case remote
        case local(WebSocketCloseInfo)
        case aborted
    }

    private struct State {
        var end: End?
        var aborted = false
        var failure: String?
    }

    let negotiatedSubprotocol: String?
    private let task: any WebSocketTask
    private let completed: OneShotSignal<WebSocketCloseInfo>
    private let logger: Logger
    private let state = Locked(State())

    init(
        task: any WebSocketTask, negotiatedSubprotocol: String?, completed: OneShotSignal<WebSocketCloseInfo>,
        logger: Logger
    ) {
        self.task = task
        self.negotiatedSubprotocol = negotiatedSubprotocol
        self.completed = completed
        self.logger = logger
    }

    func receive() async throws -> WebSocketMessage? {
        guard state.withLock({ $0.end == nil }) else { return nil }
        do {
            let message = try await task.receive()
            // A message that arrives after a local close or abort is not delivered: reading has ended.
            return state.withLock { $0.end == nil } ? message : nil
        } catch {
            if error is CancellationError, Task.isCancelled { throw error }
            state.withLock { state in
                if state.end == nil {
                    state.end = .remote
                    state.failure = describe(error)
                }
            }
            return nil
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        guard state.withLock({ $0.end == nil }) else { throw WebSocketSeamError.notConnected }
        do {
            try await task.send(message)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(describe(error))"])
            throw WebSocketSeamError.notConnected
        }
    }

    func close(code: UInt16, reason: String) async {
        let first = state.withLock { state -> Bool in
            guard state.end == nil else { return false }
            state.end = .local(WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true))
            return true
        }
        if first { task.cancel(with: Int(code), reason: reason.isEmpty ? nil : Data(reason.utf8)) }
    }

    func abort() {
        state.withLock { state in
            state.aborted = true
            if state.end == nil { state.end = .aborted }
        }
        task.cancel()
    }

    /// Ends the connection when the scope's closure has returned, and tells how it ended.
    func end(closeTimeout: Duration) async -> WebSocketCloseInfo {
        let (end, aborted, failure, closeNow) = state.withLock { state -> (End, Bool, String?, Bool) in
            var closeNow = false
            if state.end == nil {
                if completed.isFired {
                    // The task ended before the scope did (the peer closed and nobody read it): the peer was first.
                    state.end = .remote
                } else {
                    // The scope neither closed nor aborted: it closes normally.
                    state.end = .local(WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true))
                    closeNow = true
                }
            }
            return (state.end ?? .aborted, state.aborted, state.failure, closeNow)
        }
        if closeNow { task.cancel(with: 1000, reason: nil) }
        let aborting = WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true)
        if aborted {
            // Nothing is awaited after an abort; a peer's close that was seen first and is already known still wins.
            if case .remote = end, let peer = completed.value { return Self.remote(peer, failure: failure) }
            return aborting
        }
        let answered = await waitForCompletion(timeout: closeTimeout)
        // No answer within the close timeout (or the caller was cancelled): drop the connection.
        if answered == nil { task.cancel() }
        switch end {
        case .local(let info): return info
        case .aborted: return aborting
        case .remote:
            return Self.remote(answered ?? WebSocketCloseInfo(code: nil, reason: ""), failure: failure)
        }
    }

    private static func remote(_ info: WebSocketCloseInfo, failure: String?) -> WebSocketCloseInfo {
        let reason = info.code == nil && info.reason.isEmpty ? (failure ?? "connection closed") : info.reason
        return WebSocketCloseInfo(code: info.code, reason: reason, initiatedLocally: false)
    }

    /// How the task ended, or `nil` when it did not end within `timeout` (or the calling task was cancelled).
    private func waitForCompletion(timeout: Duration) async -> WebSocketCloseInfo? {
        if let value = completed.value { return value }
        return await withTaskGroup(of: WebSocketCloseInfo?.self) { [completed] group in
            group.addTask { await completed.wait() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

// MARK: - URLSession

/// The ``WebSocketTask`` behind the default ``URLSessionWebSocketConnector``: a `URLSessionWebSocketTask` in a
/// `URLSession` of its own, whose delegate reports the open, the server's close frame and the end of the task.
///
/// Compiled on every platform with FoundationNetworking so CI type-checks it, but only created where
/// ``URLSessionWebSocketConnector/supportsURLSessionWebSocketTasks`` holds.
///
/// `@unchecked Sendable`: `URLSessionWebSocketTask` is documented as thread-safe but not annotated `Sendable` in
/// every SDK; this class has no mutable state of its own.
final class URLSessionWebSocketTaskAdapter: WebSocketTask, @unchecked Sendable {
    private let session: URLSession
    private let task: URLSessionWebSocketTask
    private let bridge: URLSessionWebSocketDelegateBridge

    init(request: URLRequest, configuration: URLSessionConfiguration, maxMessageSize: Int) {
        bridge = URLSessionWebSocketDelegateBridge()
        session = URLSession(configuration: configuration, delegate: bridge, delegateQueue: nil)
        task = session.webSocketTask(with: request)
        task.maximumMessageSize = maxMessageSize
    }

    func resume() async throws -> String? {
        task.resume()
        guard let opened = await bridge.opened.wait() else {
            task.cancel()
            throw CancellationError()
        }
        return try opened.get()
    }

    func send(_ message: WebSocketMessage) async throws {
        switch message {
        case .text(let text): try await task.send(.string(text))
        case .binary(let data): try await task.send(.data(data))
        }
    }

    func receive() async throws -> WebSocketMessage {
        switch try await task.receive() {
        case .string(let text): return .text(text)
        case .data(let data): return .binary(data)
        @unknown default: throw WebSocketSeamError.connectionFailed("unsupported WebSocket message kind")
        }
    }

    func cancel(with closeCode: Int, reason: Data?) {
        // Apple's CloseCode accepts any code; where it is a closed enum, unknown (application) codes become 1000.
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: closeCode) ?? .normalClosure, reason: reason)
    }

    func cancel() {
        task.cancel()
    }

    func completion() async -> WebSocketCloseInfo {
        await bridge.ended.wait() ?? WebSocketCloseInfo(code: nil, reason: "no longer awaited")
    }
}

/// The session delegate: reports the open (with the selected subprotocol) or the refusal of the upgrade, the
/// server's close frame and the end of the task, as one-shot signals. Callbacks arrive on URLSession's delegate
/// queue.
final class URLSessionWebSocketDelegateBridge: NSObject, URLSessionWebSocketDelegate, Sendable {
    /// The upgrade's outcome: the selected subprotocol, or why the socket did not open.
    let opened = OneShotSignal<Result<String?, any Error>>()
    /// How the task ended.
    let ended = OneShotSignal<WebSocketCloseInfo>()

    func urlSession(
        _ session: URLSession,
        webSocketTask: URLSessionWebSocketTask,
        didOpenWithProtocol protocol: String?
    ) {
        opened.fire(.success(`protocol`))
    }

    func urlSession(
        _ session: URLSession,
        webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode,
        reason: Data?
    ) {
        let text = reason.flatMap { String(data: $0, encoding: .utf8) } ?? ""
        ended.fire(WebSocketCloseInfo(code: UInt16(clamping: closeCode.rawValue), reason: text))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        opened.fire(.failure(Self.upgradeFailure(status: (task.response as? HTTPURLResponse)?.statusCode, error: error)))
        if let webSocketTask = task as? URLSessionWebSocketTask, webSocketTask.closeCode != .invalid {
            let reason = webSocketTask.closeReason.flatMap { String(data: $0, encoding: .utf8) } ?? ""
            ended.fire(WebSocketCloseInfo(code: UInt16(clamping: webSocketTask.closeCode.rawValue), reason: reason))
        } else {
            ended.fire(WebSocketCloseInfo(code: nil, reason: error.map { $0.localizedDescription } ?? "connection closed"))
        }
        // The session keeps its delegate until it is invalidated; its only task has ended.
        session.finishTasksAndInvalidate()
    }

    /// Why a task ended before its socket opened: a response other than 101 is a refused upgrade, reported with its
    /// status first (`"HTTP 401 unauthorized"`) so ``WebSocketSeamError/isAuthenticationRejection`` can tell;
    /// without a response the connection failed.
    static func upgradeFailure(status: Int?, error: (any Error)?) -> WebSocketSeamError {
        if let status, status != 101 {
            return .upgradeRejected("HTTP \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))")
        }
        return .connectionFailed(error.map { $0.localizedDescription } ?? "the connection ended before it opened")
    }
}
#endif
