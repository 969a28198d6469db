import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import WebSocketNIO

/// How long the raw sockets wait for something that should happen before they call it a hang: long, because it only bounds a
/// hang (the suite starts ninety servers at once, and a loaded machine made 5 s too short for an upgrade).
let rawSocketDeadline: Duration = .seconds(20)

/// A raw WebSocket client for conformance tests: sends text frames exactly as given and records every message and how
/// the server closed.
///
/// It runs on the package's own `NIOWebSocketConnector`. It ran on swift-websocket's `WSClient` before, and about one
/// local-backend run in ten failed: a socket whose server answered and closed at once (a refused `connection_init`, the
/// maximum duration) never saw the answer, the close frame or the TCP close, for 20 s, while the server's log showed
/// all three sent. The connector is the one the notifier uses against the same server in the integration group.
final class RawWebSocket: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case upgradeFailed(String)
        case timedOut(String)
        case notOpen
        case notJSON(String)

        var description: String {
            switch self {
            case .upgradeFailed(let detail): "upgrade failed: \(detail)"
            case .timedOut(let what): "timed out waiting for \(what)"
            case .notOpen: "not open"
            case .notJSON(let text): "not a JSON object: \(text)"
            }
        }
    }

    private struct State {
        var connection: (any WebSocketConnection)?
        var messages: [String] = []
        var close: WebSocketCloseInfo?
        var failure: String?
    }

    /// Frames up to 4 MiB and messages up to 16 MiB either way, as the conformance tests send and read them.
    private static let connector: NIOWebSocketConnector = {
        var logger = Logger(label: "raw-websocket")
        logger.logLevel = .critical
        return NIOWebSocketConnector(
            maxFrameSize: 4 * 1024 * 1024, maxMessageSize: 16 * 1024 * 1024, closeTimeout: .seconds(3), runsLinksOnEventLoop: false,
            logger: logger)
    }()

    private let state = Locked(State())
    private let task = Locked<Task<Void, Never>?>(nil)

    private init() {}

    /// Connects and waits for the upgrade. `headers` go on the upgrade request; `subprotocols` are offered in one
    /// `Sec-WebSocket-Protocol` header.
    static func connect(
        _ url: String, subprotocols: [String] = [], headers: [String: String] = [:], timeout: Duration = rawSocketDeadline
    ) async throws -> RawWebSocket {
        guard let parsed = URL(string: url) else { throw Failure.upgradeFailed("not a URL: \(url)") }
        let request = WebSocketRequest(
            url: parsed, subprotocols: subprotocols, headers: headers.map { HTTPHeaderField(name: $0.key, value: $0.value) })
        let socket = RawWebSocket()
        let state = socket.state
        let task = Task {
            do {
                let scope = try await connector.withConnection(request) { connection in
                    state.withLock { $0.connection = connection }
                    while let message = try await connection.receive() {
                        switch message {
                        case .text(let text): state.withLock { $0.messages.append(text) }
                        case .binary(let data): state.withLock { $0.messages.append(String(decoding: data, as: UTF8.self)) }
                        }
                    }
                }
                state.withLock { $0.close = scope.close }
            } catch {
                state.withLock { state in
                    state.failure = "\(error)"
                    state.close = WebSocketCloseInfo(code: nil, reason: "\(error)")
                }
            }
        }
        socket.task.withLock { $0 = task }
        try await socket.poll("the upgrade", timeout: timeout) { state -> Void? in
            if state.connection != nil { return () }
            if let failure = state.failure { throw Failure.upgradeFailed(failure) }
            if state.close != nil { throw Failure.upgradeFailed("closed before opening") }
            return nil
        }
        return socket
    }

    /// Sends one text frame (split into frames of 4 MiB above that).
    func send(_ text: String) async throws {
        guard let connection = state.withLock({ $0.close == nil ? $0.connection : nil }) else { throw Failure.notOpen }
        try await connection.send(.text(text))
    }

    /// The next message as text, removing it from the inbox.
    func nextText(timeout: Duration = rawSocketDeadline) async throws -> String {
        try await poll("a message", timeout: timeout) { state in
            if !state.messages.isEmpty { return state.messages.removeFirst() }
            if let close = state.close { throw Failure.timedOut("a message (the socket closed: \(close))") }
            return nil
        }
    }

    /// The next message as a JSON object.
    func next(timeout: Duration = rawSocketDeadline) async throws -> [String: Any] {
        let text = try await nextText(timeout: timeout)
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw Failure.notJSON(text)
        }
        return object
    }

    /// The next message whose `type` is not `ka`.
    func nextSkippingKeepAlive(timeout: Duration = rawSocketDeadline) async throws -> [String: Any] {
        while true {
            let message = try await next(timeout: timeout)
            if message["type"] as? String != "ka" { return message }
        }
    }

    /// Waits for the connection to end; returns the server's close code.
    func waitForClose(timeout: Duration = rawSocketDeadline) async throws -> UInt16? {
        try await waitForCloseInfo(timeout: timeout).code
    }

    /// Waits for the connection to end; returns how it ended (the server's close code and reason).
    func waitForCloseInfo(timeout: Duration = rawSocketDeadline) async throws -> WebSocketCloseInfo {
        try await poll("the close", timeout: timeout) { $0.close }
    }

    /// Whether the connection has ended.
    var isClosed: Bool { state.withLock { $0.close != nil } }

    /// Closes normally and waits for the end.
    func close() async {
        if let connection = state.withLock({ $0.close == nil ? $0.connection : nil }) {
            await connection.close(code: 1000, reason: "")
        }
        _ = try? await waitForCloseInfo(timeout: .seconds(3))
        task.withLock { $0?.cancel() }
    }

    /// What the socket had seen, for a timeout's message: a hang that happens once in many runs is diagnosed from it.
    private static func describe(_ state: inout State) -> String {
        let types = state.messages.suffix(5).map { text in
            (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["type"] as? String ?? "?"
        }
        return "open: \(state.connection != nil), closed: \(state.close.map { "\($0)" } ?? "no"), \(state.messages.count) messages "
            + "unread, the last types \(types), failure: \(state.failure ?? "none")"
    }

    private func poll<T>(_ what: String, timeout: Duration, _ check: (inout State) throws -> T?) async throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: TestTime.scaled(timeout))
        while true {
            if let value = try state.withLock(check) { return value }
            guard clock.now < deadline else { throw Failure.timedOut("\(what) (\(state.withLock(Self.describe)))") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
