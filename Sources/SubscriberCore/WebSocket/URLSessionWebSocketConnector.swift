#if canImport(Darwin)
import Foundation
import Logging

/// Opens WebSocket connections with `URLSessionWebSocketTask` (Apple platforms only).
///
/// Not available on Linux: FoundationNetworking's libcurl backend has no WebSocket support there; use
/// ``NIOWebSocketConnector`` instead. Subprotocols are offered in one comma-separated `Sec-WebSocket-Protocol`
/// header; the server's choice is read from `urlSession(_:webSocketTask:didOpenWithProtocol:)`.
///
/// Backpressure: `receive()` asks the task for one message at a time; whatever URLSession buffers below that is
/// outside this type's control.
public struct URLSessionWebSocketConnector: WebSocketConnector {
    /// The default limit for one inbound message: 2 MiB (AppSync messages reach about 1.3 MB; URLSession's own
    /// default is 1 MiB).
    public static let defaultMaxMessageSize = 2 * 1024 * 1024

    /// The largest message accepted from the server.
    public var maxMessageSize: Int
    /// How long ``WebSocketConnection/close(code:reason:)`` waits for the closing handshake.
    public var closeTimeout: Duration
    /// Makes the configuration of the `URLSession` created for each connection.
    public var makeSessionConfiguration: @Sendable () -> URLSessionConfiguration
    /// Where connection events are logged. Header values and subprotocols are never logged.
    public var logger: Logger

    /// Creates a connector.
    ///
    /// - Parameters:
    ///   - maxMessageSize: The largest message accepted from the server, in bytes.
    ///   - closeTimeout: How long a close waits for the closing handshake.
    ///   - makeSessionConfiguration: Makes the session configuration for each connection (default `.default`).
    ///   - logger: The logger for connection events.
    public init(
        maxMessageSize: Int = URLSessionWebSocketConnector.defaultMaxMessageSize,
        closeTimeout: Duration = .seconds(5),
        makeSessionConfiguration: @escaping @Sendable () -> URLSessionConfiguration = { .default },
        logger: Logger = Logger(label: "vortex.websocket")
    ) {
        self.maxMessageSize = maxMessageSize
        self.closeTimeout = closeTimeout
        self.makeSessionConfiguration = makeSessionConfiguration
        self.logger = logger
    }

    /// Connects and returns once the server has accepted the WebSocket upgrade.
    ///
    /// - Throws: ``WebSocketSeamError/invalidURL(_:)``, ``WebSocketSeamError/connectionFailed(_:)``,
    ///   ``WebSocketSeamError/upgradeRejected(_:)`` (with the HTTP status), or `CancellationError`.
    public func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            let host = request.url.host, !host.isEmpty
        else {
            throw WebSocketSeamError.invalidURL("\(request.url.scheme ?? "?")://\(request.url.host ?? "?") is not a ws or wss URL")
        }
        var urlRequest = URLRequest(url: request.url)
        if !request.subprotocols.isEmpty {
            urlRequest.setValue(request.subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        for header in request.headers {
            urlRequest.addValue(header.value, forHTTPHeaderField: header.name)
        }

        let delegate = URLSessionWebSocketDelegateBridge()
        let session = URLSession(configuration: makeSessionConfiguration(), delegate: delegate, delegateQueue: nil)
        let task = session.webSocketTask(with: urlRequest)
        task.maximumMessageSize = maxMessageSize
        // The session keeps its delegate until it is invalidated; this invalidates it once the task ends.
        defer { session.finishTasksAndInvalidate() }

        let opened: String?
        do {
            opened = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    delegate.awaitOpen(continuation)
                    task.resume()
                }
            } onCancel: {
                task.cancel()
            }
        } catch {
            task.cancel()
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
        logger.debug("WebSocket open", metadata: ["ws.host": "\(host)"])
        return URLSessionWebSocketConnection(
            task: task,
            delegate: delegate,
            negotiatedSubprotocol: opened,
            closeTimeout: closeTimeout,
            logger: logger
        )
    }
}

/// A connection opened by `URLSessionWebSocketConnector`.
///
/// `@unchecked Sendable`: `URLSessionWebSocketTask` is documented as thread-safe but not annotated `Sendable` in
/// every SDK this package supports; all mutable state of this class is behind `Locked`.
final class URLSessionWebSocketConnection: WebSocketConnection, @unchecked Sendable {
    private struct State {
        var localClose: WebSocketCloseInfo?
        var finished: WebSocketCloseInfo?
    }

    let negotiatedSubprotocol: String?
    private let task: URLSessionWebSocketTask
    private let delegate: URLSessionWebSocketDelegateBridge
    private let closeTimeout: Duration
    private let logger: Logger
    private let state = Locked(State())

    init(
        task: URLSessionWebSocketTask,
        delegate: URLSessionWebSocketDelegateBridge,
        negotiatedSubprotocol: String?,
        closeTimeout: Duration,
        logger: Logger
    ) {
        self.task = task
        self.delegate = delegate
        self.negotiatedSubprotocol = negotiatedSubprotocol
        self.closeTimeout = closeTimeout
        self.logger = logger
    }

    deinit {
        // Dropped without close: end the socket rather than leaving it open.
        task.cancel(with: .goingAway, reason: nil)
    }

    func receive() async -> WebSocketInboundEvent {
        if let finished = state.withLock({ $0.finished }) { return .closed(finished) }
        do {
            switch try await task.receive() {
            case .string(let text):
                return .message(.text(text))
            case .data(let data):
                return .message(.binary(data))
            @unknown default:
                return .closed(await finish(error: nil, fallback: "unsupported WebSocket message kind"))
            }
        } catch {
            return .closed(await finish(error: error, fallback: "connection closed"))
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        let usable = state.withLock { $0.localClose == nil && $0.finished == nil }
        guard usable else { throw WebSocketSeamError.notConnected }
        do {
            switch message {
            case .text(let text):
                try await task.send(.string(text))
            case .binary(let data):
                try await task.send(.data(data))
            }
        } catch {
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(error)"])
            throw WebSocketSeamError.notConnected
        }
    }

    func close(code: UInt16, reason: String) async {
        let first = state.withLock { state -> Bool in
            guard state.localClose == nil, state.finished == nil else { return false }
            state.localClose = WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true)
            return true
        }
        if first {
            let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure
            task.cancel(with: closeCode, reason: reason.isEmpty ? nil : Data(reason.utf8))
            // Wait (bounded) for URLSession to report the end of the task.
            await delegate.waitForEnd(timeout: closeTimeout)
        }
        _ = await finish(error: nil, fallback: "closed")
    }

    /// Records and returns the final close; the first caller decides it.
    private func finish(error: (any Error)?, fallback: String) async -> WebSocketCloseInfo {
        if let finished = state.withLock({ $0.finished }) { return finished }
        // The delegate's close callback can trail the failing receive() a little.
        if state.withLock({ $0.localClose }) == nil, task.closeCode == .invalid, delegate.remoteClose == nil {
            await delegate.waitForEnd(timeout: .milliseconds(500))
        }
        let remote: WebSocketCloseInfo
        if let close = delegate.remoteClose {
            remote = close
        } else if task.closeCode != .invalid {
            let reason = task.closeReason.flatMap { String(data: $0, encoding: .utf8) } ?? ""
            remote = WebSocketCloseInfo(code: UInt16(clamping: task.closeCode.rawValue), reason: reason)
        } else {
            remote = WebSocketCloseInfo(code: nil, reason: error.map { $0.localizedDescription } ?? fallback)
        }
        return state.withLock { state in
            if let finished = state.finished { return finished }
            let info = state.localClose ?? remote
            state.finished = info
            return info
        }
    }
}

/// The session delegate: reports the open (with the selected subprotocol), the server's close frame and the end
/// of the task. Callbacks arrive on URLSession's delegate queue; state is behind `Locked`.
final class URLSessionWebSocketDelegateBridge: NSObject, URLSessionWebSocketDelegate, Sendable {
    private struct State {
        var openWaiter: CheckedContinuation<String?, any Error>?
        var remoteClose: WebSocketCloseInfo?
        var ended = false
    }

    private let state = Locked(State())

    /// The server's close frame, once it arrived.
    var remoteClose: WebSocketCloseInfo? { state.withLock { $0.remoteClose } }

    /// Registers the continuation resumed when the socket opens or fails to.
    func awaitOpen(_ continuation: CheckedContinuation<String?, any Error>) {
        state.withLock { $0.openWaiter = continuation }
    }

    /// Polls until the task has ended, at most `timeout`.
    func waitForEnd(timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while !state.withLock({ $0.ended }), ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func urlSession(
        _ session: URLSession,
        webSocketTask: URLSessionWebSocketTask,
        didOpenWithProtocol protocol: String?
    ) {
        let waiter = state.withLock { state in
            defer { state.openWaiter = nil }
            return state.openWaiter
        }
        waiter?.resume(returning: `protocol`)
    }

    func urlSession(
        _ session: URLSession,
        webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode,
        reason: Data?
    ) {
        let text = reason.flatMap { String(data: $0, encoding: .utf8) } ?? ""
        state.withLock { state in
            state.remoteClose = WebSocketCloseInfo(code: UInt16(clamping: closeCode.rawValue), reason: text)
            state.ended = true
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let waiter = state.withLock { state in
            defer {
                state.openWaiter = nil
                state.ended = true
            }
            return state.openWaiter
        }
        guard let waiter else { return }
        if let response = task.response as? HTTPURLResponse, response.statusCode != 101 {
            waiter.resume(throwing: WebSocketSeamError.upgradeRejected("HTTP \(response.statusCode)"))
        } else {
            let detail = error.map { $0.localizedDescription } ?? "the connection ended before it opened"
            waiter.resume(throwing: WebSocketSeamError.connectionFailed(detail))
        }
    }
}
#endif
