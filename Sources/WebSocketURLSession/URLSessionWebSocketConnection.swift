#if canImport(Darwin) || canImport(FoundationNetworking)
import Foundation
import Logging
import SubscriberCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connection ``URLSessionWebSocketConnector`` hands to a scope: a ``WebSocketTask``, alive exactly as long as
/// the scope's closure. The first end wins: the peer's close (seen by `receive()`), a local close, or an abort.
///
/// `URLSessionWebSocketTask`'s async `receive()` and `send(_:)` are its completion-handler API bridged: cancelling the
/// Swift task that awaits them does not end them; only a frame, or cancelling the URLSession task, does (SwiftPhoenixClient
/// #281 and #286, wire-ios #4833). So every wait here is bounded by something this type does itself: a cancelled
/// `receive()` or `send(_:)` drops the task, and a close waits at most the close timeout for the peer before dropping it.
final class URLSessionWebSocketConnection: WebSocketConnection {
    private enum End: Sendable {
        case remote
        case local(WebSocketCloseInfo)
        case aborted
    }

    private struct State {
        var end: End?
        /// The task was dropped (`cancel()`): nothing more is awaited from it.
        var dropped = false
        var failure: String?
    }

    let negotiatedSubprotocol: String?
    private let task: any WebSocketTask
    private let completed: OneShotSignal<WebSocketCloseInfo>
    private let closeTimeout: Duration
    private let logger: Logger
    private let state = Locked(State())
    private let pongHandler = Locked<(@Sendable () -> Void)?>(nil)

    init(
        task: any WebSocketTask, negotiatedSubprotocol: String?, completed: OneShotSignal<WebSocketCloseInfo>,
        closeTimeout: Duration, logger: Logger
    ) {
        self.task = task
        self.negotiatedSubprotocol = negotiatedSubprotocol
        self.completed = completed
        self.closeTimeout = closeTimeout
        self.logger = logger
    }

    func receive() async throws -> WebSocketMessage? {
        guard state.withLock({ $0.end == nil }) else { return nil }
        do {
            let message = try await withTaskCancellationHandler {
                try await task.receive()
            } onCancel: {
                drop()
            }
            // A message that arrives after a local close or abort is not delivered: reading has ended.
            return state.withLock { $0.end == nil } ? message : nil
        } catch {
            state.withLock { state in
                if state.end == nil {
                    state.end = .remote
                    state.failure = describeWithoutRequest(error)
                }
            }
            return nil
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        guard state.withLock({ $0.end == nil }) else { throw WebSocketSeamError.notConnected }
        do {
            try await withTaskCancellationHandler {
                try await task.send(message)
            } onCancel: {
                drop()
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(describeWithoutRequest(error))"])
            throw WebSocketSeamError.notConnected
        }
    }

    /// Sends the close frame, then waits at most the close timeout (less if the caller is cancelled) for the task to
    /// end, and drops it if it did not: a pending `receive()` ends either way, so a scope that closes before it waits
    /// for its reader never waits for a frame that may not come.
    func close(code: UInt16, reason: String) async {
        let first = state.withLock { state -> Bool in
            guard state.end == nil else { return false }
            state.end = .local(WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true))
            return true
        }
        guard first else { return }
        task.cancel(with: Int(code), reason: reason.isEmpty ? nil : Data(reason.utf8))
        if await waitForCompletion(timeout: closeTimeout) == nil { drop() }
    }

    /// Pings through the task; a pong (the handler called without an error) goes to the link's handler on
    /// URLSession's delegate queue. A ping that fails reports nothing: the missing pong says enough. Nothing awaits the
    /// handler, and once the scope has ended it reaches nobody.
    func sendPing() -> Bool {
        guard state.withLock({ $0.end == nil }) else { return true }
        task.sendPing { [pongHandler] error in
            if error == nil { pongHandler.withLock { $0 }?() }
        }
        return true
    }

    func onPong(_ handler: @escaping @Sendable () -> Void) {
        pongHandler.withLock { $0 = handler }
    }

    func abort() {
        state.withLock { state in
            if state.end == nil { state.end = .aborted }
        }
        drop()
    }

    /// Cancels the URLSession task (at most once): a pending `receive()` or `send(_:)` then ends, and the task reports
    /// its end (`urlSession(_:task:didCompleteWithError:)`).
    private func drop() {
        let first = state.withLock { state -> Bool in
            if state.end == nil { state.end = .aborted }
            defer { state.dropped = true }
            return !state.dropped
        }
        if first { task.cancel() }
    }

    /// Ends the connection when the scope's closure has returned (a close with 1000 unless it closed or was dropped, at
    /// most the close timeout for the peer's answer), and tells how it ended.
    func end() async -> WebSocketCloseInfo {
        pongHandler.withLock { $0 = nil }
        let (end, dropped, failure, closeNow) = state.withLock { state -> (End, Bool, String?, Bool) in
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
            return (state.end ?? .aborted, state.dropped, state.failure, closeNow)
        }
        if closeNow { task.cancel(with: 1000, reason: nil) }
        let aborting = WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true)
        // Nothing is awaited from a dropped task; a peer's close that is already known still wins.
        let answered = dropped ? completed.value : await waitForCompletion(timeout: closeTimeout)
        // No answer within the close timeout (or the caller was cancelled): drop the connection.
        if answered == nil { drop() }
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
#endif
