import Foundation
import Logging
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// The handshake is sent inside the link's scope, so its ack deadline runs while it is sent: a connection whose send
/// never completes (a peer that stopped reading; on Apple platforms, a task that never calls a send's handler) ends at
/// the ack timeout instead of leaving the link connecting for ever.
@Suite("LinkRunner's handshake", .timeLimit(.minutes(2)))
struct LinkRunnerHandshakeTests {
    @Test("a handshake send that never completes is ended by the ack timeout: the link aborts and reports it")
    func stuckHandshakeSendTimesOut() async throws {
        let clock = ManualClock()
        let connector = StuckSendConnector()
        let runner = LinkRunner(
            clock: clock, wallClock: .system, logger: Logger(label: "test.link-runner"), ackTimeout: .seconds(15), rotateAfter: nil)
        let driver = TestLinkDriver(fallback: .protocolPing, states: ConnectionStateBroadcaster())
        let request = WebSocketRequest(url: URL(string: "ws://127.0.0.1:9/test")!)
        let link = Task { await runner.run(id: 1, connector: connector, request: request, driver: driver) }
        defer { link.cancel() }

        try await waitUntil("the handshake send to wait") { connector.connection.sendCount == 1 }
        try await clock.waitForSleeper(sleeping: .seconds(15))
        clock.advance(by: .seconds(15))
        let report = try await link.boundedValue()
        #expect(report.end == .ackTimeout(.seconds(15)))
        #expect(connector.connection.wasAborted)
        #expect(connector.connection.sendCount == 1, "nothing was sent after the stuck handshake")
    }
}

/// Opens one ``StuckSendConnection`` and runs the scope on it.
private struct StuckSendConnector: WebSocketConnector {
    let connection = StuckSendConnection()

    func withConnection<Value: Sendable>(
        _ request: WebSocketRequest, _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        let value = try await body(connection)
        return WebSocketScopeResult(value: value, close: WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true))
    }
}

/// A connection whose sends never complete until it is aborted or closed (or the sender is cancelled), and which
/// receives nothing.
private final class StuckSendConnection: WebSocketConnection {
    private let ended = OneShotSignal<Void>()
    private let state = Locked((sends: 0, aborted: false))

    var negotiatedSubprotocol: String? { nil }
    /// How many sends were asked of it.
    var sendCount: Int { state.withLock { $0.sends } }
    /// Whether the link aborted it.
    var wasAborted: Bool { state.withLock { $0.aborted } }

    func receive() async throws -> WebSocketMessage? {
        _ = await ended.wait()
        return nil
    }

    func send(_ message: WebSocketMessage) async throws {
        state.withLock { $0.sends += 1 }
        _ = await ended.wait()
        throw WebSocketSeamError.notConnected
    }

    func close(code: UInt16, reason: String) async { ended.fire() }

    func abort() {
        state.withLock { $0.aborted = true }
        ended.fire()
    }
}
