import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOWebSocket
import RealtimeTesting
import SubscriberCore
import WSClient

/// How long the raw sockets wait for something that should happen before they call it a hang: long, because it only bounds a
/// hang (the suite starts ninety servers at once, and a loaded machine made 5 s too short for an upgrade).
let rawSocketDeadline: Duration = .seconds(20)

/// A raw WebSocket client on swift-websocket's `WSClient` for conformance tests: sends text frames exactly as given
/// and records every message and the server's close code.
final class RawWebSocket: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case upgradeFailed(String)
        case timedOut(String)
        case notOpen

        var description: String {
            switch self {
            case .upgradeFailed(let detail): "upgrade failed: \(detail)"
            case .timedOut(let what): "timed out waiting for \(what)"
            case .notOpen: "not open"
            }
        }
    }

    private struct State {
        var writer: WebSocketOutboundWriter?
        var messages: [String] = []
        var closed = false
        var closeCode: UInt16?
        var failure: String?
    }

    private let state = Locked(State())
    private let task = Locked<Task<Void, Never>?>(nil)

    private init() {}

    /// Connects and waits for the upgrade. `headers` go on the upgrade request; `subprotocols` are offered in one
    /// `Sec-WebSocket-Protocol` header.
    static func connect(
        _ url: String, subprotocols: [String] = [], headers: [String: String] = [:], timeout: Duration = rawSocketDeadline
    ) async throws -> RawWebSocket {
        var fields = HTTPFields()
        if !subprotocols.isEmpty { fields[.secWebSocketProtocol] = subprotocols.joined(separator: ", ") }
        for (name, value) in headers {
            guard let fieldName = HTTPField.Name(name) else { continue }
            fields[fieldName] = value
        }
        let socket = RawWebSocket()
        var logger = Logger(label: "raw-websocket")
        logger.logLevel = .critical
        let configuration = WebSocketClientConfiguration(maxFrameSize: 4 * 1024 * 1024, additionalHeaders: fields)
        let state = socket.state
        let task = Task {
            do {
                let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
                    inbound, outbound, _ in
                    state.withLock { $0.writer = outbound }
                    for try await message in inbound.messages(maxSize: 16 * 1024 * 1024) {
                        switch message {
                        case .text(let text): state.withLock { $0.messages.append(text) }
                        case .binary(let buffer): state.withLock { $0.messages.append(String(buffer: buffer)) }
                        }
                    }
                }
                state.withLock { state in
                    state.closed = true
                    state.closeCode = close.map { UInt16(webSocketErrorCode: $0.closeCode) }
                }
            } catch {
                state.withLock { state in
                    state.closed = true
                    state.failure = "\(error)"
                }
            }
        }
        socket.task.withLock { $0 = task }
        try await socket.poll("the upgrade", timeout: timeout) { state -> Void? in
            if state.writer != nil { return () }
            if let failure = state.failure { throw Failure.upgradeFailed(failure) }
            if state.closed { throw Failure.upgradeFailed("closed before opening") }
            return nil
        }
        return socket
    }

    /// Sends one text frame (fragmented by WSClient above its frame size).
    func send(_ text: String) async throws {
        guard let writer = state.withLock({ $0.writer }), !state.withLock({ $0.closed }) else { throw Failure.notOpen }
        try await writer.writeTextMessage(text)
    }

    /// The next message as text, removing it from the inbox.
    func nextText(timeout: Duration = rawSocketDeadline) async throws -> String {
        try await poll("a message", timeout: timeout) { state in
            if !state.messages.isEmpty { return state.messages.removeFirst() }
            if state.closed {
                throw Failure.timedOut("a message (the socket closed with \(state.closeCode.map(String.init) ?? "no code"))")
            }
            return nil
        }
    }

    /// The next message as a JSON object.
    func next(timeout: Duration = rawSocketDeadline) async throws -> [String: Any] {
        let text = try await nextText(timeout: timeout)
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw Failure.upgradeFailed("not a JSON object: \(text)")
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
        try await poll("the close", timeout: timeout) { state in state.closed ? .some(state.closeCode) : nil }
    }

    /// Whether the connection has ended.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Closes normally and waits for the end.
    func close() async {
        if let writer = state.withLock({ $0.writer }), !isClosed {
            try? await writer.close(.normalClosure, reason: nil)
        }
        _ = try? await waitForClose(timeout: .seconds(3))
        task.withLock { $0?.cancel() }
    }

    /// What the socket had seen, for a timeout's message: a hang that happens once in many runs is diagnosed from it.
    private static func describe(_ state: inout State) -> String {
        let types = state.messages.suffix(5).map { text in
            (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["type"] as? String ?? "?"
        }
        return "open: \(state.writer != nil), closed: \(state.closed), \(state.messages.count) messages unread, the last "
            + "types \(types), failure: \(state.failure ?? "none")"
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
