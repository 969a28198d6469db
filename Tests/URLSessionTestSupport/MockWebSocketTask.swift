import Foundation
import SubscriberCore
import WebSocketURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``WebSocketTask`` that plays the server and behaves like `URLSessionWebSocketTask` wherever a cooperative mock
/// would be kinder than Apple's task. Each modelled behaviour names its source:
///
/// - **`receive()` and `send(_:)` ignore Swift cancellation**: they end only on a frame (a send: at once, or once read
///   by a server that stopped reading, ``serverStopsReading()``, never), the server's close or failure, or ``cancel()``. The async methods are the completion-handler API bridged; cancelling the awaiting Swift task does
///   not end them (SwiftPhoenixClient #281, and #286 which went back to the callback API before iOS 17; wire-ios
///   #4833, a receive loop that outlived its consumer; dotnet/signalr-client-swift #101, `await receiveTask?.value`
///   that never returns).
/// - **A close frame ends nothing by itself**: after ``cancel(with:reason:)`` a pending `receive()` and
///   ``completion()`` end only when the server answers the close, which a silent server never does (Apple's
///   documentation of `cancel(with:reason:)` promises only that it "sends a close frame"; signalr-client-swift #101:
///   the close handler is never called).
/// - **``cancel()`` ends everything**: a pending `receive()` or `send(_:)` throws and ``completion()`` returns (Apple's
///   `URLSessionTask.cancel()`: "`urlSession(_:task:didCompleteWithError:)` will be sent to the task delegate").
/// - **Each ping's handler is called exactly once**: with `nil` for its pong, or with an error once the connection is
///   lost or the task cancelled, in the order the pings were sent (Apple's `sendPing(pongReceiveHandler:)`).
/// - **The selected subprotocol is reported only when the task advertised protocols** (Apple's
///   `urlSession(_:webSocketTask:didOpenWithProtocol:)`: `nil` "if the client did not advertise protocols when creating
///   the task").
/// - **A connection that fails without a close frame never completes a pending receive**
///   (``serverFailsLikeCFNetwork(_:sendsNeverComplete:)``): the task's end is reported (``completion()`` returns) but the receive's
///   completion handler is not called, nor that of any later receive once the queued messages are read, and a
///   ``cancel()`` afterwards calls none of them either (WebKit PR #28392, rdar://110487778: "If the TCP connection has
///   an error but we have not received a close frame, then CFNetwork will call didCompleteWithError but won't call the
///   completion block of receiveMessageWithCompletionHandler"; Apple documents no effect of `cancel()` on a task that
///   has completed). Nothing orders a receive's completion after the end either: ``deliverAfterEnd(_:)`` calls one
///   late (Apple documents no order between `receive(completionHandler:)`'s handler and `didCompleteWithError`).
/// - **Nor, then, a send** (``serverFailsLikeCFNetwork(_:sendsNeverComplete:)`` with `true`): a send pending at the
///   failure, or asked after it, never has its completion handler called, not even after ``cancel()``
///   (moozzyk/SignalR-Client-Swift #226: with Wi-Fi off, the handler of a send, handed to `URLSessionWebSocketTask` as
///   is, was "not at all" called while the loss was reported; its maintainer: "if the task does not call the completion
///   handler I have no control over it").
/// - **``completion()`` returns when the task awaiting it is cancelled**, as `URLSessionWebSocketTaskAdapter`'s does
///   (it waits for the delegate's callback on a cancellable signal, the seam's contract); otherwise only at the end,
///   which `reportsEnd: false` never reports.
public final class MockWebSocketTask: WebSocketTask, Sendable {
    /// How the server answers the upgrade.
    public enum Upgrade: Sendable {
        /// Switches protocols, selecting `subprotocol` (reported only if the task advertised protocols).
        case accept(subprotocol: String?)
        /// Switches protocols, selecting the first subprotocol the client offered, as a server of that protocol does.
        case acceptOffered
        /// Answers with an HTTP status (mapped as URLSession's delegate maps it).
        case refuse(status: Int)
        /// The task fails to open with this error.
        case fail(any Error)
        /// Never answers; cancelling the task fails the open (as URLSession does).
        case pending
        /// Never answers, whatever happens, until ``releaseStall()``.
        case stall
    }

    /// The server's answers to what the client sends: called for each message the client sent, in order; what it
    /// returns is queued for the client to receive.
    public typealias Responder = @Sendable (WebSocketMessage) -> [WebSocketMessage]

    /// A close frame the client sent.
    public struct ClientClose: Sendable, Equatable {
        /// The close code.
        public var code: Int
        /// The close reason, `nil` for none.
        public var reason: String?

        /// Creates a close record.
        public init(code: Int, reason: String?) {
            self.code = code
            self.reason = reason
        }
    }

    /// The error the task's methods throw.
    public struct MockError: Error, CustomStringConvertible {
        /// What happened.
        public var description: String
    }

    private enum Inbound: Sendable {
        case message(WebSocketMessage)
        case end(String)
    }

    private struct State {
        var request: WebSocketRequest?
        var resumeCount = 0
        var sent: [WebSocketMessage] = []
        var clientCloses: [ClientClose] = []
        var dropCount = 0
        var failure: String?
        var closing = false
        var ended = false
        var pings = 0
        var pendingPongs: [@Sendable ((any Error)?) -> Void] = []
        var inbound: [Inbound] = []
        var receiver: (@Sendable (Inbound) -> Void)?
        /// The connection failed CFNetwork's way: no receive is answered any more but from what is queued.
        var failedLikeCFNetwork = false
        /// Receives the task will never answer (after a CFNetwork-style failure), oldest first.
        var unanswered: [@Sendable (Inbound) -> Void] = []
        /// The server stopped reading: sends wait in `pendingSends` until the task's end.
        var holdsSends = false
        var pendingSends: [@Sendable ((any Error)?) -> Void] = []
        /// The connection failed CFNetwork's way, losing sends: no send is answered any more.
        var sendsLost = false
        var unansweredSends: [@Sendable ((any Error)?) -> Void] = []
    }

    private let upgrade: Upgrade
    private let answersPings: Bool
    private let answersClose: Bool
    private let reportsEnd: Bool
    private let respond: Responder?
    private let state = Locked(State())
    private let resumed = DeafSignal<Void>()
    private let receiving = DeafSignal<Void>()
    private let cancelled = DeafSignal<Void>()
    private let stallReleased = DeafSignal<Void>()
    private let ended = OneShotSignal<WebSocketCloseInfo>()
    private let completionAbandoned = OneShotSignal<Void>()

    /// Creates a task.
    ///
    /// - Parameters:
    ///   - upgrade: How the server answers the upgrade.
    ///   - answersClose: `false` makes a server that never answers the client's close frame.
    ///   - reportsEnd: `false` makes a task whose ``completion()`` never returns even after ``cancel()`` or
    ///     ``serverFailsLikeCFNetwork(_:sendsNeverComplete:)``, only when its caller is cancelled (harsher than Apple's, to prove an abort awaits nothing and leaves no waiter behind).
    ///   - answersPings: `false` makes a server whose pongs wait for ``answerPings(with:)`` (or the task's end).
    ///   - respond: The server's answers to what the client sends; `nil` answers nothing.
    public init(
        upgrade: Upgrade, answersClose: Bool = true, reportsEnd: Bool = true, answersPings: Bool = true, respond: Responder? = nil
    ) {
        self.upgrade = upgrade
        self.answersPings = answersPings
        self.answersClose = answersClose
        self.reportsEnd = reportsEnd
        self.respond = respond
    }

    // MARK: The test's side

    /// Records the request the connector made the task with.
    public func made(with request: WebSocketRequest) { state.withLock { $0.request = request } }

    /// The request the task was made with.
    public var request: WebSocketRequest? { state.withLock { $0.request } }
    /// How often the connector resumed the task.
    public var resumeCount: Int { state.withLock { $0.resumeCount } }
    /// The messages the client sent, in order.
    public var sentMessages: [WebSocketMessage] { state.withLock { $0.sent } }
    /// The close frames the client sent, in order.
    public var clientCloses: [ClientClose] { state.withLock { $0.clientCloses } }
    /// How often the client dropped the task (`cancel()`).
    public var dropCount: Int { state.withLock { $0.dropCount } }
    /// How many pings the client sent.
    public var pingCount: Int { state.withLock { $0.pings } }
    /// Whether the task has ended (dropped, closed by the server, or its close answered) and no `receive()` waits on it
    /// any more: nothing of the connection holds a task of the client's. Receives the task will never answer (after
    /// ``serverFailsLikeCFNetwork(_:sendsNeverComplete:)``) are not counted: see ``unansweredReceiveCount``.
    public var isReleased: Bool { state.withLock { $0.ended && $0.receiver == nil } }
    /// How many receives the task left unanswered for good (after ``serverFailsLikeCFNetwork(_:sendsNeverComplete:)``).
    public var unansweredReceiveCount: Int { state.withLock { $0.unanswered.count } }
    /// How many sends wait for a server that stopped reading (``serverStopsReading()``); they are not in
    /// ``sentMessages``.
    public var pendingSendCount: Int { state.withLock { $0.pendingSends.count } }
    /// How many sends the task left unanswered for good (``serverFailsLikeCFNetwork(_:sendsNeverComplete:)``).
    public var unansweredSendCount: Int { state.withLock { $0.unansweredSends.count } }

    /// Calls the handlers of the pings not answered yet, with `error` (`nil`: the pong arrived).
    public func answerPings(with error: (any Error)? = nil) {
        let handlers = state.withLock { state in
            defer { state.pendingPongs = [] }
            return state.pendingPongs
        }
        for handler in handlers { handler(error) }
    }

    /// Queues a message from the server.
    public func serverSends(_ message: WebSocketMessage) { deliver(.message(message)) }

    /// The server closes with a close frame: queued messages are still read, then reading ends.
    public func serverCloses(code: UInt16, reason: String) {
        finish(WebSocketCloseInfo(code: code, reason: reason), reading: "closed")
    }

    /// The transport breaks without a close frame.
    public func serverFails(_ reason: String) {
        state.withLock { $0.failure = reason }
        finish(WebSocketCloseInfo(code: nil, reason: reason), reading: reason)
    }

    /// The transport breaks without a close frame, the way CFNetwork reports it: the end is reported (``completion()``
    /// returns with `reason` and no code, pending pings fail) but a pending receive is never answered, nor any later one
    /// once the queued messages are read, and a later ``cancel()`` answers none of them (WebKit PR #28392). With
    /// `sendsNeverComplete`, no send pending at the failure or asked after it is ever answered either
    /// (moozzyk/SignalR-Client-Swift #226); otherwise pending sends fail.
    public func serverFailsLikeCFNetwork(_ reason: String, sendsNeverComplete: Bool = false) {
        let (pongs, sends) = state.withLock { state in
            guard !state.ended else { return ([@Sendable ((any Error)?) -> Void](), [@Sendable ((any Error)?) -> Void]()) }
            state.failure = reason
            state.failedLikeCFNetwork = true
            state.ended = true
            if let receiver = state.receiver { state.unanswered.append(receiver) }
            state.receiver = nil
            if sendsNeverComplete {
                state.sendsLost = true
                state.unansweredSends += state.pendingSends
                state.pendingSends = []
            }
            defer { (state.pendingPongs, state.pendingSends) = ([], []) }
            return (state.pendingPongs, state.pendingSends)
        }
        for pong in pongs { pong(MockError(description: "the connection ended")) }
        for send in sends { send(MockError(description: reason)) }
        if reportsEnd { ended.fire(WebSocketCloseInfo(code: nil, reason: reason)) }
    }

    /// The server stops reading (a full receive window): each send from now on waits, deaf to Swift cancellation, until
    /// the task ends (the send then fails, or with ``serverFailsLikeCFNetwork(_:sendsNeverComplete:)`` is never
    /// answered) or ``cancel()`` fails it.
    public func serverStopsReading() { state.withLock { $0.holdsSends = true } }

    /// Calls the oldest receive left unanswered by ``serverFailsLikeCFNetwork(_:sendsNeverComplete:)`` with `message`, as CFNetwork may
    /// when it read the message before the end: nothing documents that a receive's handler comes before the end.
    /// Returns whether a receive was waiting.
    @discardableResult
    public func deliverAfterEnd(_ message: WebSocketMessage) -> Bool {
        let receiver = state.withLock { state in state.unanswered.isEmpty ? nil : state.unanswered.removeFirst() }
        receiver?(.message(message))
        return receiver != nil
    }

    /// Waits until the connector resumed the task.
    public func waitForResume() async { await resumed.wait() }

    /// Waits until a `receive()` is pending.
    public func waitForReceiver() async { await receiving.wait() }

    /// Waits until a ``completion()`` was given up by its cancelled caller before the task's end was reported.
    public func waitForCompletionToBeAbandoned() async { await completionAbandoned.wait() }

    /// Lets a stalled upgrade end (it then fails).
    public func releaseStall() { stallReleased.fire(()) }

    // MARK: The connector's side (WebSocketTask)

    public func resume() async throws -> String? {
        let offered = state.withLock { state -> [String] in
            state.resumeCount += 1
            return state.request?.subprotocols ?? []
        }
        resumed.fire(())
        switch upgrade {
        case .accept(let subprotocol):
            return offered.isEmpty ? nil : subprotocol
        case .acceptOffered:
            return offered.first
        case .refuse(let status):
            // As URLSession's delegate bridge maps a status other than 101: the status first.
            throw WebSocketSeamError.upgradeRejected("HTTP \(status) \(HTTPURLResponse.localizedString(forStatusCode: status))")
        case .fail(let error):
            throw error
        case .pending:
            await cancelled.wait()
            throw MockError(description: "cancelled during the upgrade")
        case .stall:
            await stallReleased.wait()
            throw MockError(description: "stalled upgrade released")
        }
    }

    /// The completion-handler send bridged, as Apple's async `send(_:)` is: a send the task never answers never returns.
    public func send(_ message: WebSocketMessage) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            send(message) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    public func send(_ message: WebSocketMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        let answer = state.withLock { state -> (any Error)?? in
            if state.sendsLost {
                state.unansweredSends.append(completionHandler)
                return .none
            }
            guard !state.closing, !state.ended else { return .some(MockError(description: "not connected")) }
            if state.holdsSends {
                state.pendingSends.append(completionHandler)
                return .none
            }
            state.sent.append(message)
            return .some(nil)
        }
        guard let answer else { return }
        if answer == nil { for reply in respond?(message) ?? [] { serverSends(reply) } }
        completionHandler(answer)
    }

    /// The completion-handler receive bridged, as Apple's async `receive()` is: after ``serverFailsLikeCFNetwork(_:sendsNeverComplete:)``
    /// it never returns.
    public func receive() async throws -> WebSocketMessage {
        try await withCheckedThrowingContinuation { continuation in
            receive { continuation.resume(with: $0) }
        }
    }

    public func receive(completionHandler: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void) {
        let receiver: @Sendable (Inbound) -> Void = { next in
            switch next {
            case .message(let message): completionHandler(.success(message))
            case .end(let reason): completionHandler(.failure(MockError(description: reason)))
            }
        }
        let ready = state.withLock { state -> Inbound? in
            if !state.inbound.isEmpty { return state.inbound.removeFirst() }
            if state.failedLikeCFNetwork {
                state.unanswered.append(receiver)
                return nil
            }
            if state.ended { return .end(state.failure ?? "closed") }
            if state.receiver != nil { return .end("concurrent receive") }
            state.receiver = receiver
            return nil
        }
        if let ready { receiver(ready) } else { receiving.fire(()) }
    }

    public func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        let answer = state.withLock { state -> (any Error)?? in
            state.pings += 1
            if state.ended || state.dropCount > 0 { return .some(MockError(description: "not connected")) }
            if answersPings { return .some(nil) }
            state.pendingPongs.append(pongReceiveHandler)
            return .none
        }
        if let answer { pongReceiveHandler(answer) }
    }

    public func cancel(with closeCode: Int, reason: Data?) {
        let first = state.withLock { state -> Bool in
            guard !state.closing, !state.ended else { return false }
            state.closing = true
            state.clientCloses.append(ClientClose(code: closeCode, reason: reason.map { String(decoding: $0, as: UTF8.self) }))
            return true
        }
        guard first, answersClose else { return }
        finish(WebSocketCloseInfo(code: UInt16(clamping: closeCode), reason: ""), reading: "closed")
    }

    public func cancel() {
        state.withLock { state in
            state.closing = true
            state.dropCount += 1
        }
        cancelled.fire(())
        finish(reportsEnd ? WebSocketCloseInfo(code: nil, reason: "cancelled") : nil, reading: "cancelled")
    }

    public func completion() async -> WebSocketCloseInfo {
        if let info = await ended.wait() { return info }
        completionAbandoned.fire(())
        return WebSocketCloseInfo(code: nil, reason: "no longer awaited")
    }

    // MARK: Delivery

    private func deliver(_ item: Inbound) {
        let receiver = state.withLock { state -> (@Sendable (Inbound) -> Void)? in
            if state.ended { return nil }
            if let receiver = state.receiver {
                state.receiver = nil
                return receiver
            }
            state.inbound.append(item)
            return nil
        }
        receiver?(item)
    }

    /// The task ends: reading ends after what is queued, pending pings and sends fail, and ``completion()`` reports
    /// `info` (`nil`: it never returns).
    private func finish(_ info: WebSocketCloseInfo?, reading reason: String) {
        deliver(.end(state.withLock { $0.failure } ?? reason))
        let (pongs, sends) = state.withLock { state in
            state.ended = true
            defer { (state.pendingPongs, state.pendingSends) = ([], []) }
            return (state.pendingPongs, state.pendingSends)
        }
        for pong in pongs { pong(MockError(description: "the connection ended")) }
        for send in sends { send(MockError(description: "the connection ended")) }
        if let info { ended.fire(info) }
    }
}

/// A value set once and awaited by any number of tasks, deaf to Swift cancellation: the waits of an Apple API that
/// bridges a callback.
final class DeafSignal<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = Locked(State())

    func fire(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    func wait() async -> Value {
        await withCheckedContinuation { continuation in
            let value = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let value { continuation.resume(returning: value) }
        }
    }
}
