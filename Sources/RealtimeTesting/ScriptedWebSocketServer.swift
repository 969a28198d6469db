import Foundation
import SubscriberCore

/// How long a test's waits allow by default for what should happen, in seconds: the scripted server's (a connection, a
/// sent frame, a ping, a close), ``SubscriptionProbe``'s, ``ManualClock``'s, ``withTestTimeout(_:_:_:)``,
/// ``waitUntil(_:timeout:_:)`` and the other helpers'. They only bound a hang, so a wait that must run out (a check
/// that something does not happen) passes its own short timeout. 5 s was too short on a loaded machine. In the soak, four
/// tests of the notifier group timed out waiting for a client to connect while a 200,000-event test of the same run held
/// both cores' worker threads; and a local-backend test that takes 0.14 s alone took 5-7 s in every round, as the
/// group's 95 tests start their backends at once beside the burners, and once timed out waiting for its event.
public let scriptedWait: Double = 20

/// How a ``ScriptedConnection`` answers the client's WebSocket pings.
public enum PingAnswering: Sendable, Equatable {
    /// A pong at once, on the client's thread, for every ping (what real servers do).
    case automatically
    /// No pong until the test calls ``ScriptedConnection/answerPings()`` (or ``ScriptedConnection/emitPong()``).
    case manually
    /// Never a pong: a server that ignores pings.
    case never
    /// The connection cannot send pings at all (``WebSocketConnection/sendPing()`` returns `false`), as a connector
    /// without ping support.
    case unsupported
}

/// A fake WebSocket server behind the seam: it plays the server in unit tests and records what the client sent.
///
/// Each `connect` creates a ``ScriptedConnection``; tests pick connections up in order with ``nextConnection(timeout:)``,
/// script the server's side (messages, close codes, transport errors, or silence) and read the client's frames. The
/// client's WebSocket pings are counted and answered as ``pingAnswering`` says (at once, by default).
public final class ScriptedWebSocketServer: WebSocketConnector, Sendable {
    private struct State {
        var connections = ReadLog<ScriptedConnection>()
        var refusals: [WebSocketSeamError] = []
        var requests: [WebSocketRequest] = []
        var pingAnswering = PingAnswering.automatically
        var linkExecutor: (any LinkExecutor)?
        /// Set by ``holdScopeEnds()``: scopes wait on it once the client's body returned.
        var scopeEndHold: OneShotSignal<Void>?
        var heldScopeEnds = 0
    }

    private let state = Locked(State())

    /// Creates a server with no connections.
    public init() {}

    /// Makes the next `count` connection attempts fail with `error`.
    public func refuseNextConnections(_ count: Int = 1, with error: WebSocketSeamError = .connectionFailed("refused by the test")) {
        state.withLock { $0.refusals.append(contentsOf: Array(repeating: error, count: count)) }
    }

    /// How connections accepted from now on answer the client's pings (each connection can change it too).
    public var pingAnswering: PingAnswering {
        get { state.withLock { $0.pingAnswering } }
        set { state.withLock { $0.pingAnswering = newValue } }
    }

    /// The executor connections accepted from now on offer their link (``WebSocketConnection/linkExecutor``); `nil`,
    /// the default, offers none, as a connector without a thread of its own.
    public var linkExecutor: (any LinkExecutor)? {
        get { state.withLock { $0.linkExecutor } }
        set { state.withLock { $0.linkExecutor = newValue } }
    }

    /// Every connection request seen, refused ones included.
    public var requests: [WebSocketRequest] { state.withLock { $0.requests } }

    /// How many connections were accepted.
    public var connectionCount: Int { state.withLock { $0.connections.all.count } }

    /// Opens a scripted connection and runs the client's scope on it (called by the transport under test).
    public func withConnection<Value: Sendable>(
        _ request: WebSocketRequest,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        let outcome: Result<ScriptedConnection, WebSocketSeamError> = state.withLock { state in
            state.requests.append(request)
            if !state.refusals.isEmpty { return .failure(state.refusals.removeFirst()) }
            let connection = ScriptedConnection(request: request, pingAnswering: state.pingAnswering, linkExecutor: state.linkExecutor)
            state.connections.append(connection)
            return .success(connection)
        }
        let connection = try outcome.get()
        let value = try await body(connection)
        if let hold = state.withLock({ state -> OneShotSignal<Void>? in
            if state.scopeEndHold != nil { state.heldScopeEnds += 1 }
            return state.scopeEndHold
        }) {
            // Deaf to cancellation, as a slow closing handshake is: the wait runs in a task the caller's cancellation
            // does not reach.
            _ = await Task { await hold.wait() }.value
        }
        return WebSocketScopeResult(value: value, close: connection.scopeEnded())
    }

    /// From now on, a connection's scope does not end (the connector does not return) until ``releaseScopeEnds()``,
    /// however the client ended it: a connection slow to close, as one whose peer takes its time over the closing
    /// handshake, seen from the transport.
    public func holdScopeEnds() {
        state.withLock { $0.scopeEndHold = OneShotSignal() }
    }

    /// Ends every held scope, and holds no more.
    public func releaseScopeEnds() {
        state.withLock { state in
            defer { state.scopeEndHold = nil }
            return state.scopeEndHold
        }?.fire()
    }

    /// How many scopes reached the hold of ``holdScopeEnds()``.
    public var heldScopeEnds: Int { state.withLock { $0.heldScopeEnds } }

    /// The next accepted connection not yet handed to the test, waiting for it if needed.
    public func nextConnection(timeout: Double = scriptedWait) async throws -> ScriptedConnection {
        try await withTestTimeout(timeout, "the client to connect") { [state] in
            while true {
                if let next = state.withLock({ $0.connections.next() }) { return next }
                try await TestTime.pollPause()
            }
        }
    }
}

/// One connection of the ``ScriptedWebSocketServer``: the test plays the server on it.
public final class ScriptedConnection: WebSocketConnection, Sendable {
    private struct State {
        var sent = ReadLog<WebSocketMessage>()
        var closed: WebSocketCloseInfo?
        var clientClose: WebSocketCloseInfo?
        var subprotocol: String?
        var aborted = false
        var pingAnswering: PingAnswering
        var pings = 0
        var unanswered = 0
        var pongHandler: (@Sendable () -> Void)?
    }

    private enum Inbound: Sendable {
        case message(WebSocketMessage)
        case end(WebSocketCloseInfo)
    }

    /// The request the client opened this connection with.
    public let request: WebSocketRequest
    private let state: Locked<State>
    private let inboundContinuation: AsyncStream<Inbound>.Continuation
    private let iterator: Locked<AsyncStream<Inbound>.AsyncIterator?>

    /// What this connection offers its link to run and sleep on (see ``ScriptedWebSocketServer/linkExecutor``).
    public let linkExecutor: (any LinkExecutor)?

    init(request: WebSocketRequest, pingAnswering: PingAnswering = .automatically, linkExecutor: (any LinkExecutor)? = nil) {
        self.request = request
        self.linkExecutor = linkExecutor
        self.state = Locked(State(subprotocol: request.subprotocols.first, pingAnswering: pingAnswering))
        let (inbound, continuation) = AsyncStream<Inbound>.makeStream()
        inboundContinuation = continuation
        iterator = Locked(inbound.makeAsyncIterator())
    }

    // MARK: The client's side (the seam)

    /// The subprotocol this fake selected: the first offered, unless the test changes it.
    public var negotiatedSubprotocol: String? { state.withLock { $0.subprotocol } }

    /// Next message the test scripted; `nil` once either side closed.
    public func receive() async throws -> WebSocketMessage? {
        if state.withLock({ $0.closed != nil }) { return nil }
        // Single consumer by contract; the iterator is taken out of the lock while awaiting.
        guard
            var local = iterator.withLock({ state -> AsyncStream<Inbound>.AsyncIterator? in
                defer { state = nil }
                return state
            })
        else { return nil }
        let next = await local.next()
        iterator.withLock { $0 = local }
        switch next {
        case .message(let message)?:
            return state.withLock { $0.closed == nil } ? message : nil
        case .end(let info)?:
            state.withLock { state in if state.closed == nil { state.closed = info } }
            return nil
        case nil:
            return nil
        }
    }

    /// Records what the client sent.
    public func send(_ message: WebSocketMessage) async throws {
        try state.withLock { state in
            guard state.closed == nil else { throw WebSocketSeamError.notConnected }
            state.sent.append(message)
        }
    }

    /// The client closes: recorded, and the fake answers at once (reading ends).
    public func close(code: UInt16, reason: String) async {
        clientEnded(WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true), aborted: false)
    }

    /// The client pings: counted, and answered as ``pingAnswering`` says. After either side closed nothing happens.
    public func sendPing() -> Bool {
        let (supported, answerNow) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard state.pingAnswering != .unsupported else { return (false, nil) }
            guard state.closed == nil else { return (true, nil) }
            state.pings += 1
            switch state.pingAnswering {
            case .automatically: return (true, state.pongHandler)
            case .manually: state.unanswered += 1
            case .never, .unsupported: break
            }
            return (true, nil)
        }
        answerNow?()
        return supported
    }

    /// Records the client's pong handler.
    public func onPong(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.pongHandler = handler }
    }

    /// The client drops the connection without a handshake: recorded (``wasAborted``), and reading ends.
    public func abort() {
        clientEnded(WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true), aborted: true)
    }

    private func clientEnded(_ info: WebSocketCloseInfo, aborted: Bool) {
        let first = state.withLock { state -> Bool in
            guard state.clientClose == nil else { return false }
            state.clientClose = info
            state.aborted = aborted
            if state.closed == nil { state.closed = info }
            return true
        }
        if first { inboundContinuation.yield(.end(info)) }
        inboundContinuation.finish()
    }

    /// The client's scope ended: a client that neither closed nor aborted closes normally (as the real connectors do).
    func scopeEnded() -> WebSocketCloseInfo {
        let info = state.withLock { state -> WebSocketCloseInfo in
            if let closed = state.closed { return closed }
            let info = WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true)
            state.closed = info
            state.clientClose = info
            return info
        }
        inboundContinuation.finish()
        return info
    }

    // MARK: The server's side (the test)

    /// Sends a text frame to the client.
    public func emit(_ text: String) {
        inboundContinuation.yield(.message(.text(text)))
    }

    /// Sends a binary frame to the client.
    public func emit(binary: Data) {
        inboundContinuation.yield(.message(.binary(binary)))
    }

    /// Closes from the server side with a close frame.
    public func closeFromServer(code: UInt16, reason: String = "") {
        endFromServer(WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: false))
    }

    /// Breaks the transport without a close frame (the client sees 1006).
    public func failTransport(_ reason: String = "connection reset") {
        endFromServer(WebSocketCloseInfo(code: nil, reason: reason, initiatedLocally: false))
    }

    private func endFromServer(_ info: WebSocketCloseInfo) {
        inboundContinuation.yield(.end(info))
        inboundContinuation.finish()
    }

    /// How this connection answers the client's pings from now on.
    public var pingAnswering: PingAnswering {
        get { state.withLock { $0.pingAnswering } }
        set { state.withLock { $0.pingAnswering = newValue } }
    }

    /// How many WebSocket pings the client sent on this connection.
    public var pingCount: Int { state.withLock { $0.pings } }

    /// Answers every ping not answered yet (``PingAnswering/manually``), one pong each; returns how many.
    @discardableResult
    public func answerPings() -> Int {
        let (count, handler) = state.withLock { state -> (Int, (@Sendable () -> Void)?) in
            defer { state.unanswered = 0 }
            return (state.unanswered, state.pongHandler)
        }
        for _ in 0..<count { handler?() }
        return count
    }

    /// Sends a pong whether or not a ping is waiting (RFC 6455 allows unsolicited pongs).
    public func emitPong() {
        state.withLock { $0.pongHandler }?()
    }

    /// Waits until the client has sent at least `count` pings on this connection.
    public func waitForPings(_ count: Int, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "the client to send \(count) ping(s)") { [state] in
            while state.withLock({ $0.pings }) < count { try await TestTime.pollPause() }
        }
    }

    /// Changes the subprotocol this fake reports as selected.
    public func selectSubprotocol(_ subprotocol: String?) {
        state.withLock { $0.subprotocol = subprotocol }
    }

    /// Every message the client sent, in order.
    public var sentMessages: [WebSocketMessage] { state.withLock { $0.sent.all } }

    /// The text frames the client sent, in order.
    public var sentTexts: [String] {
        sentMessages.compactMap { if case .text(let text) = $0 { text } else { nil } }
    }

    /// Whether the client dropped the connection without a closing handshake (it found the link dead).
    public var wasAborted: Bool { state.withLock { $0.aborted } }

    /// The client's close, if it closed.
    public var clientClose: WebSocketCloseInfo? { state.withLock { $0.clientClose } }

    /// Whether the connection has ended (either side).
    public var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// The next text frame the client sends that the test has not read yet, waiting for it.
    public func nextSentText(timeout: Double = scriptedWait) async throws -> String {
        try await withTestTimeout(timeout, "the client to send a frame") { [state] in
            while true {
                let next = state.withLock { $0.sent.next() }
                if case .text(let text)? = next { return text }
                if next == nil { try await TestTime.pollPause() }
            }
        }
    }

    /// The next client frame decoded as a JSON object.
    public func nextSentJSON(timeout: Double = scriptedWait) async throws -> [String: Any] {
        let text = try await nextSentText(timeout: timeout)
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestTimeoutError(what: "a JSON object frame (got \(text))")
        }
        return object
    }

    /// Waits until the client has closed this connection, and returns its close.
    public func waitForClientClose(timeout: Double = scriptedWait) async throws -> WebSocketCloseInfo {
        try await withTestTimeout(timeout, "the client to close") { [state] in
            while true {
                if let close = state.withLock({ $0.clientClose }) { return close }
                try await TestTime.pollPause()
            }
        }
    }
}
