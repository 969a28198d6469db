#if canImport(Darwin) || canImport(FoundationNetworking)
import Foundation
import Logging
import SubscriberCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - The task seam

/// One WebSocket client task, as ``URLSessionWebSocketConnector`` drives it: the small part of
/// `URLSessionWebSocketTask` the connector uses, so tests can play the server with a mock task (the pattern of
/// Apollo iOS's `WebSocketTask` and `MockWebSocketTask`).
///
/// The connector calls ``resume()`` once, then ``send(_:completionHandler:)`` and ``receive(completionHandler:)``
/// while the connection is open, and ends it with ``cancel(with:reason:)`` (closing handshake) or ``cancel()`` (drop).
/// It awaits ``completion()`` from a task of its own, and never for longer than its close timeout.
///
/// The connector assumes no more than `URLSessionWebSocketTask` promises: its async methods may ignore Swift
/// cancellation (they bridge completion handlers), a close frame may never be answered, and a send or a receive may
/// never be answered at all once the connection failed without a close frame (WebKit PR #28392,
/// moozzyk/SignalR-Client-Swift #226), not even after ``cancel()``. Every wait the connector makes is bounded by a
/// ``cancel()`` of its own or by the task's end.
public protocol WebSocketTask: Sendable {
    /// Starts the task and waits for the server's answer to the upgrade request.
    ///
    /// - Returns: the subprotocol the server selected, or `nil` when it selected none.
    /// - Throws: ``WebSocketSeamError/upgradeRejected(_:)`` with the HTTP status first (`"HTTP 401"`) when the server
    ///   answered without switching protocols, ``WebSocketSeamError/connectionFailed(_:)`` when no answer came, or
    ///   `CancellationError`.
    func resume() async throws -> String?

    /// Sends one message. Throws once the task is closing or has ended. It may ignore Swift cancellation.
    /// The connector sends through ``send(_:completionHandler:)``, whose default implementation calls this.
    func send(_ message: WebSocketMessage) async throws

    /// Sends one message and reports to `completionHandler`, at most once, that it went out (`nil`) or why not.
    /// `URLSessionWebSocketTask.send(_:completionHandler:)` has this shape.
    ///
    /// The handler may never be called: with the network gone, the connection's loss is reported but a pending send's
    /// handler is not called at all (moozzyk/SignalR-Client-Swift #226), as CFNetwork does for a receive (WebKit PR
    /// #28392). So the connector never waits on the handler alone: the task's end (``completion()``) and its own drops
    /// end the wait as well, and it asks nothing of a task whose end was reported.
    ///
    /// The default implementation awaits ``send(_:)`` in a task of its own that lasts exactly as long as that call.
    /// A task with a completion-handler API should implement this instead.
    func send(_ message: WebSocketMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The next complete message. Throws once the peer closed, the connection broke, or the task was cancelled with
    /// ``cancel()`` (a pending call then throws). It may ignore Swift cancellation, as `URLSessionWebSocketTask` does.
    /// The connector asks through ``receive(completionHandler:)``, whose default implementation calls this.
    func receive() async throws -> WebSocketMessage

    /// Asks for the next complete message and reports it, or why none will come, to `completionHandler`, at most once.
    /// `URLSessionWebSocketTask.receive(completionHandler:)` has this shape.
    ///
    /// The handler may never be called: when the connection fails without a close frame, CFNetwork reports the task's
    /// end but does not complete a pending receive (WebKit PR #28392, rdar://110487778), and nothing documents that a
    /// later ``cancel()`` completes it. So the connector never waits on the handler alone: the task's end
    /// (``completion()``) and its own drops end the wait as well, and the handler may come after the wait was given up.
    ///
    /// The default implementation awaits ``receive()`` in a task of its own that lasts exactly as long as that call,
    /// which ``cancel()`` ends (the contract above; the connector cancels a task whose receive is still unanswered
    /// when its scope ends). A task with a completion-handler API should implement this instead.
    func receive(completionHandler: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void)

    /// Starts the closing handshake: sends a close frame with `closeCode` and `reason`. Nothing promises that a pending
    /// ``receive()`` ends before the peer answers, or that the peer ever does.
    func cancel(with closeCode: Int, reason: Data?)

    /// Drops the connection at once, without a closing handshake. A pending ``receive()`` or ``send(_:)`` throws
    /// promptly, and ``completion()`` returns (except for a receive or a send the task left unanswered at its end: see
    /// ``receive(completionHandler:)`` and ``send(_:completionHandler:)``).
    func cancel()

    /// Sends a WebSocket ping; `pongReceiveHandler` is called once: with `nil` when the pong arrived, with an error
    /// when none will (the task ended). `URLSessionWebSocketTask.sendPing(pongReceiveHandler:)` has this shape.
    ///
    /// The default implementation reports ``WebSocketSeamError/unsupportedPlatform(_:)`` at once, so a task written
    /// before pings joined the seam keeps working: the link finds that pings go unanswered and uses its protocol's own
    /// liveness check.
    func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// Waits until the task has ended, and tells how: the peer's close code and reason when its close frame
    /// arrived, otherwise `code` `nil` and a description of the failure. `initiatedLocally` is ignored (the connector
    /// knows what it did itself).
    ///
    /// Returns as well when the task awaiting it is cancelled (the URLSession adapter says "no longer
    /// awaited"): the connector awaits it from a watcher it cancels when the scope ends, and a wait deaf to that would
    /// keep the watcher and the task for as long as the task's end is not reported.
    func completion() async -> WebSocketCloseInfo
}

extension WebSocketTask {
    /// Awaits ``receive()`` in a task of its own and reports the outcome (see
    /// ``WebSocketTask/receive(completionHandler:)``).
    public func receive(completionHandler: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void) {
        // Unstructured by necessity (a synchronous call cannot await); it ends with the receive, which cancel() ends.
        Task {
            do { completionHandler(.success(try await receive())) } catch { completionHandler(.failure(error)) }
        }
    }

    /// Awaits ``send(_:)`` in a task of its own and reports the outcome (see
    /// ``WebSocketTask/send(_:completionHandler:)``).
    public func send(_ message: WebSocketMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        // Unstructured by necessity, as the receive's: it ends with the send.
        Task {
            do {
                try await send(message)
                completionHandler(nil)
            } catch { completionHandler(error) }
        }
    }

    /// Reports at once that no pong will come (see ``WebSocketTask/sendPing(pongReceiveHandler:)``).
    public func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        pongReceiveHandler(WebSocketSeamError.unsupportedPlatform("this WebSocketTask does not send pings"))
    }
}

#endif
