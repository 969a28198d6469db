import Foundation
import SubscriberCore

/// A fake WebSocket server behind the seam: it plays the server in unit tests and records what the client sent.
///
/// Each `connect` creates a ``ScriptedConnection``; tests pick connections up in order with ``nextConnection(timeout:)``,
/// script the server's side (messages, close codes, transport errors, or silence) and read the client's frames.
public final class ScriptedWebSocketServer: WebSocketConnector, Sendable {
    private struct State {
        var connections: [ScriptedConnection] = []
        var handedOut = 0
        var refusals: [WebSocketSeamError] = []
        var requests: [WebSocketRequest] = []
    }

    private let state = Locked(State())

    /// Creates a server with no connections.
    public init() {}

    /// Makes the next `count` connection attempts fail with `error`.
    public func refuseNextConnections(_ count: Int = 1, with error: WebSocketSeamError = .connectionFailed("refused by the test")) {
        state.withLock { $0.refusals.append(contentsOf: Array(repeating: error, count: count)) }
    }

    /// Every connection request seen, refused ones included.
    public var requests: [WebSocketRequest] { state.withLock { $0.requests } }

    /// How many connections were accepted.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Opens a scripted connection (called by the transport under test).
    public func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        let outcome: Result<ScriptedConnection, WebSocketSeamError> = state.withLock { state in
            state.requests.append(request)
            if !state.refusals.isEmpty { return .failure(state.refusals.removeFirst()) }
            let connection = ScriptedConnection(request: request)
            state.connections.append(connection)
            return .success(connection)
        }
        return try outcome.get()
    }

    /// The next accepted connection not yet handed to the test, waiting for it if needed.
    public func nextConnection(timeout: Double = 5) async throws -> ScriptedConnection {
        try await withTestTimeout(timeout, "the client to connect") { [state] in
            while true {
                let next: ScriptedConnection? = state.withLock { state in
                    guard state.handedOut < state.connections.count else { return nil }
                    defer { state.handedOut += 1 }
                    return state.connections[state.handedOut]
                }
                if let next { return next }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }
}

/// One connection of the ``ScriptedWebSocketServer``: the test plays the server on it.
public final class ScriptedConnection: WebSocketConnection, Sendable {
    private struct State {
        var sent: [WebSocketMessage] = []
        var sentCursor = 0
        var closed: WebSocketCloseInfo?
        var clientClose: WebSocketCloseInfo?
        var subprotocol: String?
    }

    /// The request the client opened this connection with.
    public let request: WebSocketRequest
    private let state: Locked<State>
    private let inbound: AsyncStream<WebSocketInboundEvent>
    private let inboundContinuation: AsyncStream<WebSocketInboundEvent>.Continuation
    private let iterator: Locked<AsyncStream<WebSocketInboundEvent>.AsyncIterator>

    init(request: WebSocketRequest) {
        self.request = request
        self.state = Locked(State(subprotocol: request.subprotocols.first))
        (inbound, inboundContinuation) = AsyncStream<WebSocketInboundEvent>.makeStream()
        iterator = Locked(inbound.makeAsyncIterator())
    }

    // MARK: The client's side (the seam)

    /// The subprotocol this fake selected: the first offered, unless the test changes it.
    public var negotiatedSubprotocol: String? { state.withLock { $0.subprotocol } }

    /// Next event the test scripted.
    public func receive() async -> WebSocketInboundEvent {
        if let closed = state.withLock({ $0.closed }) { return .closed(closed) }
        // Single consumer by contract; the iterator is taken out of the lock while awaiting.
        var local = iterator.withLock { $0 }
        let event = await local.next()
        iterator.withLock { $0 = local }
        switch event {
        case .message(let message)?:
            if let closed = state.withLock({ $0.closed }) { return .closed(closed) }
            return .message(message)
        case .closed(let info)?:
            return .closed(state.withLock { state in
                if state.closed == nil { state.closed = info }
                return state.closed!
            })
        case nil:
            return .closed(state.withLock { $0.closed ?? WebSocketCloseInfo(code: nil, reason: "stream ended") })
        }
    }

    /// Records what the client sent.
    public func send(_ message: WebSocketMessage) async throws {
        try state.withLock { state in
            guard state.closed == nil else { throw WebSocketSeamError.notConnected }
            state.sent.append(message)
        }
    }

    /// The client closes: recorded, and `receive()` reports a local close.
    public func close(code: UInt16, reason: String) async {
        let info = WebSocketCloseInfo(code: code, reason: reason, initiatedLocally: true)
        let first = state.withLock { state -> Bool in
            guard state.closed == nil else { return false }
            state.closed = info
            state.clientClose = info
            return true
        }
        if first { inboundContinuation.yield(.closed(info)) }
        inboundContinuation.finish()
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
        inboundContinuation.yield(.closed(info))
        inboundContinuation.finish()
    }

    /// Changes the subprotocol this fake reports as selected.
    public func selectSubprotocol(_ subprotocol: String?) {
        state.withLock { $0.subprotocol = subprotocol }
    }

    /// Every message the client sent, in order.
    public var sentMessages: [WebSocketMessage] { state.withLock { $0.sent } }

    /// The text frames the client sent, in order.
    public var sentTexts: [String] {
        sentMessages.compactMap { if case .text(let text) = $0 { text } else { nil } }
    }

    /// The client's close, if it closed.
    public var clientClose: WebSocketCloseInfo? { state.withLock { $0.clientClose } }

    /// Whether the connection has ended (either side).
    public var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// The next text frame the client sends that the test has not read yet, waiting for it.
    public func nextSentText(timeout: Double = 5) async throws -> String {
        try await withTestTimeout(timeout, "the client to send a frame") { [state] in
            while true {
                let next: WebSocketMessage? = state.withLock { state in
                    guard state.sentCursor < state.sent.count else { return nil }
                    defer { state.sentCursor += 1 }
                    return state.sent[state.sentCursor]
                }
                if case .text(let text)? = next { return text }
                if next == nil { try await Task.sleep(for: .milliseconds(1)) }
            }
        }
    }

    /// The next client frame decoded as a JSON object.
    public func nextSentJSON(timeout: Double = 5) async throws -> [String: Any] {
        let text = try await nextSentText(timeout: timeout)
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestTimeoutError(what: "a JSON object frame (got \(text))")
        }
        return object
    }

    /// Waits until the client has closed this connection, and returns its close.
    public func waitForClientClose(timeout: Double = 5) async throws -> WebSocketCloseInfo {
        try await withTestTimeout(timeout, "the client to close") { [state] in
            while true {
                if let close = state.withLock({ $0.clientClose }) { return close }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }
}
