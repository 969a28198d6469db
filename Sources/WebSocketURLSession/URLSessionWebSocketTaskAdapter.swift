#if canImport(Darwin) || canImport(FoundationNetworking)
import Foundation
import Logging
import SubscriberCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
    let session: URLSession
    private let task: URLSessionWebSocketTask
    private let bridge: URLSessionWebSocketDelegateBridge

    /// Makes the task for `request` in a session of its own: the subprotocols are offered through
    /// `webSocketTask(with:protocols:)`, so `didOpenWithProtocol` reports the server's choice (it reports `nil` for a
    /// task that advertised none, and a hand-set `Sec-WebSocket-Protocol` header is not advertising), and the request's
    /// headers become the session's `httpAdditionalHeaders`, on a copy of `configuration`: the app may hand the same
    /// instance to every connection, and one connection's headers (credentials) must not ride on the next.
    init(request: WebSocketRequest, configuration shared: URLSessionConfiguration, maxMessageSize: Int) {
        let configuration = shared.copy() as? URLSessionConfiguration ?? shared
        configuration.httpAdditionalHeaders = Self.additionalHeaders(request.headers, over: configuration.httpAdditionalHeaders)
        bridge = URLSessionWebSocketDelegateBridge()
        session = URLSession(configuration: configuration, delegate: bridge, delegateQueue: nil)
        task = session.webSocketTask(with: request.url, protocols: request.subprotocols)
        task.maximumMessageSize = maxMessageSize
    }

    /// The session's additional headers with the request's added (a later field of the same name joins the earlier
    /// one with a comma, as HTTP allows).
    static func additionalHeaders(_ fields: [HTTPHeaderField], over base: [AnyHashable: Any]?) -> [AnyHashable: Any]? {
        guard !fields.isEmpty else { return base }
        var headers = base ?? [:]
        var added: [String: String] = [:]
        for field in fields {
            added[field.name] = added[field.name].map { "\($0), \(field.value)" } ?? field.value
        }
        for (name, value) in added { headers[name] = value }
        return headers
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

    func send(_ message: WebSocketMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        switch message {
        case .text(let text): task.send(.string(text), completionHandler: completionHandler)
        case .binary(let data): task.send(.data(data), completionHandler: completionHandler)
        }
    }

    func receive() async throws -> WebSocketMessage {
        try Self.message(try await task.receive()).get()
    }

    func receive(completionHandler: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void) {
        task.receive { result in completionHandler(result.flatMap(Self.message)) }
    }

    private static func message(_ message: URLSessionWebSocketTask.Message) -> Result<WebSocketMessage, any Error> {
        switch message {
        case .string(let text): return .success(.text(text))
        case .data(let data): return .success(.binary(data))
        @unknown default: return .failure(WebSocketSeamError.connectionFailed("unsupported WebSocket message kind"))
        }
    }

    func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        task.sendPing(pongReceiveHandler: pongReceiveHandler)
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
/// server's close frame and the end of the task, as one-shot signals, and refuses redirects. Callbacks arrive on
/// URLSession's delegate queue.
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

    /// Refuses every redirect of the upgrade: a WebSocket task calls the redirection delegate method before completing
    /// the handshake (Apple's `URLSessionWebSocketTask` overview) and follows the redirect unless refused, and `nil`
    /// refuses it (Apple's `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`). Following
    /// would send the offered subprotocols, AppSync's authorization among them, to a host nobody configured, and the
    /// NIO connector refuses redirects too. The task then completes with the 3xx response: `upgradeRejected("HTTP 302 …")`.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        opened.fire(.failure(Self.upgradeFailure(status: (task.response as? HTTPURLResponse)?.statusCode, error: error)))
        if let webSocketTask = task as? URLSessionWebSocketTask, webSocketTask.closeCode != .invalid {
            let reason = webSocketTask.closeReason.flatMap { String(data: $0, encoding: .utf8) } ?? ""
            ended.fire(WebSocketCloseInfo(code: UInt16(clamping: webSocketTask.closeCode.rawValue), reason: reason))
        } else {
            ended.fire(WebSocketCloseInfo(code: nil, reason: error.map(describeWithoutRequest) ?? "connection closed"))
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
        return .connectionFailed(error.map(describeWithoutRequest) ?? "the connection ended before it opened")
    }
}
#endif
