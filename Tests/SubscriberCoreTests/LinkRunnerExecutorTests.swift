import Foundation
import Logging
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// How ``LinkRunner`` uses a connection's ``LinkExecutor``: the link's scope runs on it, and on the real clock the
/// timer sleeps on the executor's timer instead of the global executor's; a test clock keeps its own sleeps.
@Suite("LinkRunner on a connection's executor")
struct LinkRunnerExecutorTests {
    @Test("on the real clock the link runs on the connection's executor and every deadline is a sleep on it")
    func realClockSleepsOnTheExecutor() async throws {
        let executor = RecordingLinkExecutor()
        let server = ScriptedWebSocketServer()
        server.linkExecutor = executor
        let link = startLink(on: ContinuousClock(), server: server)

        let connection = try await server.nextConnection()
        #expect(try await connection.nextSentText() == "hello")
        // Before the acknowledgement the one deadline is the ack timeout.
        let ackWait = try await executor.waitForSleep(1)
        #expect(ackWait > .seconds(14) && ackWait <= .seconds(15))
        connection.emit("ack")
        // The first ping (sent at once, to learn whether pings are answered) is answered at once by the scripted
        // server; the timer then sleeps until the next liveness deadline, never longer than the quiet period.
        try await connection.waitForPings(1)
        let livenessWait = try await executor.waitForSleep(2)
        #expect(livenessWait > .zero && livenessWait <= .seconds(30))
        #expect(executor.runs == 1)

        link.cancel()
        let report = await link.value
        #expect(report.end == .requested)
        // Every sleep ended with the link: none is left waiting.
        #expect(executor.sleepsUnderWay == 0)
    }

    @Test("on a test clock the link still runs on the connection's executor but sleeps on the test clock")
    func testClockKeepsItsOwnSleeps() async throws {
        let executor = RecordingLinkExecutor()
        let server = ScriptedWebSocketServer()
        server.linkExecutor = executor
        let clock = ManualClock()
        let link = startLink(on: clock, server: server)

        let connection = try await server.nextConnection()
        #expect(try await connection.nextSentText() == "hello")
        connection.emit("ack")
        try await connection.waitForPings(1)
        // The quiet period passes on the test clock: the link pings again, which only a sleep on `clock` can cause.
        try await clock.waitForSleeper(sleeping: .seconds(30))
        clock.advance(by: .seconds(30))
        try await connection.waitForPings(2)
        #expect(executor.sleepCount == 0)
        #expect(executor.runs == 1)

        link.cancel()
        _ = await link.value
    }

    @Test("a connection without an executor runs the link as before")
    func noExecutor() async throws {
        let server = ScriptedWebSocketServer()
        let clock = ManualClock()
        let link = startLink(on: clock, server: server)
        let connection = try await server.nextConnection()
        #expect(connection.linkExecutor == nil)
        #expect(try await connection.nextSentText() == "hello")
        connection.emit("ack")
        try await connection.waitForPings(1)
        try await clock.waitForSleeper(sleeping: .seconds(30))
        link.cancel()
        _ = await link.value
    }

    private func startLink<C: Clock>(on clock: C, server: ScriptedWebSocketServer) -> Task<LinkReport, Never>
    where C.Duration == Duration {
        let runner = LinkRunner(
            clock: clock, wallClock: .system, logger: Logger(label: "test.link-runner"), ackTimeout: .seconds(15), rotateAfter: nil,
            liveness: LivenessSettings(quietPeriod: .seconds(30), pongTimeout: .seconds(10)))
        let driver = TestLinkDriver(fallback: .protocolPing, states: ConnectionStateBroadcaster())
        let request = WebSocketRequest(url: URL(string: "ws://127.0.0.1:9/test")!)
        return Task { await runner.run(id: 1, connector: server, request: request, driver: driver) }
    }
}

/// A ``LinkExecutor`` that records what the runner asks of it. It runs the scope where it is, and its sleeps last until
/// they are cancelled: in these tests no deadline of the executor's is ever reached.
private final class RecordingLinkExecutor: LinkExecutor {
    private struct State {
        var runs = 0
        var sleeps: [Duration] = []
        var underWay = 0
    }

    private let state = Locked(State())

    /// How many scopes ran on it.
    var runs: Int { state.withLock { $0.runs } }
    /// How many sleeps were asked for.
    var sleepCount: Int { state.withLock { $0.sleeps.count } }
    /// How many sleeps have not ended yet.
    var sleepsUnderWay: Int { state.withLock { $0.underWay } }

    func run<Value: Sendable>(_ operation: @Sendable () async -> Value) async -> Value {
        state.withLock { $0.runs += 1 }
        return await operation()
    }

    func sleep(for duration: Duration) async throws {
        state.withLock {
            $0.sleeps.append(duration)
            $0.underWay += 1
        }
        defer { state.withLock { $0.underWay -= 1 } }
        _ = await OneShotSignal<Void>().wait()  // returns only when cancelled
        throw CancellationError()
    }

    /// Waits for the `number`th sleep (counting from 1) and returns its duration.
    func waitForSleep(_ number: Int, timeout: Double = 5) async throws -> Duration {
        try await withTestTimeout(timeout, "sleep number \(number) on the link executor") { [state] in
            while true {
                if let duration = state.withLock({ $0.sleeps.count >= number ? $0.sleeps[number - 1] : nil }) { return duration }
                try await TestTime.pollPause()
            }
        }
    }
}
