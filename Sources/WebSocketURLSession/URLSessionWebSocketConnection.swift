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
/// `receive()` returns at once (the task stays open, so the scope's close that follows still sends its close frame:
/// `cancel()` would send one without a code, Apple's `cancel(with:reason:)` page says), a cancelled `send(_:)` sends the
/// close frame with 1000 and drops the task (the send may never return: a peer that stopped reading), and a close waits
/// at most the close timeout for the peer before dropping it.
///
/// A receive cannot count on a frame or a cancel either: when the connection fails without a close frame, CFNetwork
/// reports the task's end but never completes the pending receive (WebKit PR #28392, rdar://110487778), and a
/// `cancel()` of the ended task is not documented to. So `receive()` asks the task through its completion handler and
/// returns on whichever comes first: that handler, the task's end (then at most a grace of 250 ms more for the handler,
/// `defaultReceiveGrace`), or a drop or abort of its own. Nor can a send count on its handler (moozzyk/SignalR-Client-Swift
/// #226: with the network gone, "not at all"): it returns on the first of that handler, the task's end (it then throws,
/// and a send after the end is not asked of the task at all), or a drop or abort of its own.
final class URLSessionWebSocketConnection: WebSocketConnection {
    private enum End: Sendable {
        case remote
        case local(WebSocketCloseInfo)
        case aborted
    }

    /// A send asked of the task: its handler's answer, or `notConnected` once the task ended or was dropped.
    private typealias PendingSend = OneShotSignal<Result<Void, any Error>>

    private struct State {
        var end: End?
        /// The task was dropped (`cancel()`): nothing more is awaited from it.
        var dropped = false
        var failure: String?
        /// The task's end was reported (`completion()` returned).
        var taskEnded = false
        /// The receive waiting now, released by the task's end or a drop.
        var pending: PendingReceive?
        /// The last receive asked of the task: at the scope's end, one the task never answered is dropped.
        var last: PendingReceive?
        /// The sends waiting now, released by the task's end or a drop: the task may never answer them.
        var sends: [Int: PendingSend] = [:]
        var nextSend = 0
    }

    /// How long a receive still waits for the task's answer once the task's end is known. Apple documents no order
    /// between a receive's completion handler and `didCompleteWithError`, so a message CFNetwork read before the end may
    /// be handed over just after it; and CFNetwork may never answer at all (WebKit PR #28392). An answer still coming
    /// was read before the end, so it is a callback away, not a round trip: a quarter of a second is far beyond that,
    /// and short next to the first reconnect delay after a lost connection (up to 1 s, the default policy's jitter).
    static let defaultReceiveGrace: Duration = .milliseconds(250)

    let negotiatedSubprotocol: String?
    private let task: any WebSocketTask
    private let completed = OneShotSignal<WebSocketCloseInfo>()
    private let closeTimeout: Duration
    private let receiveGrace: Duration
    private let logger: Logger
    private let state = Locked(State())
    private let pongHandler = Locked<(@Sendable () -> Void)?>(nil)

    init(
        task: any WebSocketTask, negotiatedSubprotocol: String?, closeTimeout: Duration,
        receiveGrace: Duration = defaultReceiveGrace, logger: Logger
    ) {
        self.task = task
        self.negotiatedSubprotocol = negotiatedSubprotocol
        self.closeTimeout = closeTimeout
        self.receiveGrace = receiveGrace
        self.logger = logger
    }

    /// Whether the task's end was reported to the connection.
    var taskHasEnded: Bool { state.withLock { $0.taskEnded } }

    /// Records how the task ended (its `completion()`), and releases a pending receive and the pending sends the task
    /// may never answer.
    func taskEnded(_ info: WebSocketCloseInfo) {
        completed.fire(info)
        let (pending, sends) = state.withLock { state -> (PendingReceive?, [PendingSend]) in
            state.taskEnded = true
            return (state.pending, Array(state.sends.values))
        }
        pending?.taskEnded()
        for send in sends { send.fire(.failure(WebSocketSeamError.notConnected)) }
    }

    func receive() async throws -> WebSocketMessage? {
        let pending = PendingReceive()
        let alreadyEnded = state.withLock { state -> Bool? in
            guard state.end == nil else { return nil }
            state.pending = pending
            state.last = pending
            return state.taskEnded
        }
        guard let alreadyEnded else { return nil }
        task.receive { result in pending.answer(result) }
        // After the end the task may still hand over what it read before it, or nothing ever: only the grace waits.
        if alreadyEnded { pending.taskEnded() }
        let outcome = await withTaskCancellationHandler {
            await pending.outcome(grace: receiveGrace)
        } onCancel: {
            // Only this wait ends: the scope's end closes the task, with a code (a drop here would send none).
            pending.dropped()
        }
        return state.withLock { state -> WebSocketMessage? in
            state.pending = nil
            switch outcome {
            case .received(.success(let message)):
                // A message that arrives after a local close or abort is not delivered: reading has ended.
                return state.end == nil ? message : nil
            case .received(.failure(let error)):
                if state.end == nil {
                    state.end = .remote
                    state.failure = describeWithoutRequest(error)
                }
                return nil
            case .ended:
                // The task ended and never answered: the end's own description (its completion) is the reason.
                if state.end == nil { state.end = .remote }
                return nil
            case .dropped:
                return nil
            }
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        let pending = PendingSend()
        let id = try state.withLock { state -> Int in
            // An ended task may never answer a send: none is asked of it.
            guard state.end == nil, !state.taskEnded else { throw WebSocketSeamError.notConnected }
            defer { state.nextSend += 1 }
            state.sends[state.nextSend] = pending
            return state.nextSend
        }
        let outcome = await withTaskCancellationHandler {
            task.send(message) { error in pending.fire(error.map { .failure($0) } ?? .success(())) }
            return await pending.wait()
        } onCancel: {
            closeAndDrop()
        }
        state.withLock { _ = $0.sends.removeValue(forKey: id) }
        if case .success? = outcome { return }
        if Task.isCancelled { throw CancellationError() }
        if case .failure(let error)? = outcome {
            logger.debug("WebSocket send failed", metadata: ["ws.error": "\(describeWithoutRequest(error))"])
        }
        throw WebSocketSeamError.notConnected
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
        let cut = WebSocketCloseInfo.frameReason(reason)
        task.cancel(with: Int(code), reason: cut.isEmpty ? nil : Data(cut.utf8))
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

    /// A send cancelled on its way (the scope ends by cancellation, which closes with 1000): the close frame goes out
    /// with its code, then the task is dropped, as the send may never return (a peer that stopped reading).
    private func closeAndDrop() {
        let first = state.withLock { state -> Bool in
            guard state.end == nil else { return false }
            state.end = .local(WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true))
            return true
        }
        if first { task.cancel(with: 1000, reason: nil) }
        drop()
    }

    /// Cancels the URLSession task (at most once): a pending `receive()` or `send(_:)` returns at once, whether or not
    /// the task ever answers it, and the task reports its end (`urlSession(_:task:didCompleteWithError:)`).
    private func drop() {
        let (first, pending, sends) = state.withLock { state -> (Bool, PendingReceive?, [PendingSend]) in
            if state.end == nil { state.end = .aborted }
            defer { state.dropped = true }
            return (!state.dropped, state.pending, Array(state.sends.values))
        }
        if first { task.cancel() }
        pending?.dropped()
        for send in sends { send.fire(.failure(WebSocketSeamError.notConnected)) }
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
        // Nothing is awaited from a dropped task; a peer's close that is already known still wins.
        let answered = dropped ? completed.value : await waitForCompletion(timeout: closeTimeout)
        // No answer within the close timeout (or the caller was cancelled), or a receive the task never answered (a
        // task's `cancel()` is all the seam promises will end it): drop the connection.
        if answered == nil || state.withLock({ $0.last?.isAnswered == false }) { drop() }
        switch end {
        case .local(let info): return info
        case .aborted: return WebSocketCloseInfo.aborted
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
        return await completed.wait(atMost: timeout)
    }
}

/// One receive asked of the task. Its outcome is the first of: the task's answer (the completion handler), the task's
/// end, or a drop; after the end the task's answer is still awaited for a grace period. Each signal resumes its waiter
/// once, outside any lock, however many of the three happen and from whichever thread.
private final class PendingReceive: Sendable {
    enum Outcome: Sendable {
        case received(Result<WebSocketMessage, any Error>)
        /// The task ended and did not answer within the grace period.
        case ended
        case dropped
    }

    private let first = OneShotSignal<Outcome>()
    /// The task's answer or a drop, awaited once the end came first.
    private let late = OneShotSignal<Outcome>()
    private let answered = Locked(false)

    /// Whether the task called the completion handler.
    var isAnswered: Bool { answered.withLock { $0 } }

    func answer(_ result: Result<WebSocketMessage, any Error>) {
        answered.withLock { $0 = true }
        late.fire(.received(result))
        first.fire(.received(result))
    }

    func taskEnded() { first.fire(.ended) }

    func dropped() {
        late.fire(.dropped)
        first.fire(.dropped)
    }

    /// The outcome; a cancelled caller gets `.dropped` (its cancellation handler releases the wait).
    func outcome(grace: Duration) async -> Outcome {
        let outcome = await first.wait() ?? .dropped
        guard case .ended = outcome else { return outcome }
        return await late.wait(atMost: grace) ?? .ended
    }
}

extension OneShotSignal {
    /// The value, or `nil` when it is not set within `timeout` (or the calling task is cancelled).
    fileprivate func wait(atMost timeout: Duration) async -> Value? {
        await withDeadline(timeout, on: ContinuousClock(), mode: .awaitOperation) { await self.wait() } ?? nil
    }
}
#endif
