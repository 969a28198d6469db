#if canImport(Darwin) || canImport(FoundationNetworking)
import Foundation
import Logging
import SubscriberCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
    private let pongHandler = Locked<(@Sendable () -> Void)?>(nil)

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
                    state.failure = describeWithoutRequest(error)
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
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(describeWithoutRequest(error))"])
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

    /// Pings through the task; a pong (the handler called without an error) goes to the link's handler on
    /// URLSession's delegate queue. A ping that fails reports nothing: the missing pong says enough.
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
#endif
