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
        let started = ContinuousClock.now
        let link = startLink(on: ContinuousClock(), server: server)

        let connection = try await server.nextConnection()
        #expect(try await connection.nextSentText() == "hello")
        // Before the acknowledgement the one deadline is the ack timeout (15 s from the open, which lies between the start
        // and now: a loaded or sanitized run may take more than a second to get here).
        let ackWait = try await executor.waitForSleep(1)
        let elapsed = ContinuousClock.now - started
        #expect(ackWait >= .seconds(15) - elapsed && ackWait <= .seconds(15))
        connection.emit("ack")
        // The first ping (sent at once, to learn whether pings are answered) is answered at once by the scripted
        // server; the timer then sleeps until the next liveness deadline, never longer than the quiet period.
        try await connection.waitForPings(1)
        let livenessWait = try await executor.waitForSleep(2)
        #expect(livenessWait > .zero && livenessWait <= .seconds(30))
        #expect(executor.runs == 1)

        link.cancel()
        let report = try await link.boundedValue()
        #expect(report.end == .requested)
        // Every sleep ended with the link: none is left waiting.
        #expect(executor.sleepsUnderWay == 0)
    }

    @Test("with a timer of the link's own, deadlines sleep on it and a sign of life moves it later without waking it")
    func ownTimerIsMovedLater() async throws {
        let timer = RecordingLinkTimer()
        let executor = RecordingLinkExecutor(timer: timer)
        let server = ScriptedWebSocketServer()
        server.linkExecutor = executor
        let link = startLink(on: ContinuousClock(), server: server, postponeSlack: .zero)

        let connection = try await server.nextConnection()
        #expect(try await connection.nextSentText() == "hello")
        _ = try await timer.sleeps.waitForSleep(1)
        connection.emit("ack")
        try await connection.waitForPings(1)
        let livenessWait = try await timer.sleeps.waitForSleep(2)
        #expect(livenessWait > .zero && livenessWait <= .seconds(30))
        // A frame moves the next ping later: the sleeping timer is re-armed for it, not woken.
        connection.emit("event")
        let moved = try await timer.waitForReschedule(1)
        #expect(moved > .seconds(29) && moved <= .seconds(30))
        #expect(timer.sleeps.sleepCount == 2, "the sleep under way was moved, not replaced")
        #expect(executor.sleepCount == 0, "no deadline slept on the executor's own timers")

        link.cancel()
        #expect(await link.value.end == .requested)
        #expect(timer.sleeps.underWay == 0)
        #expect(timer.closed, "the link's timer is released with the link")
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
        _ = try await link.boundedValue()
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
        _ = try await link.boundedValue()
    }

    private func startLink<C: Clock>(
        on clock: C, server: ScriptedWebSocketServer, postponeSlack: Duration = .seconds(1)
    ) -> Task<LinkReport, Never> where C.Duration == Duration {
        let runner = LinkRunner(
            clock: clock, wallClock: .system, logger: Logger(label: "test.link-runner"), ackTimeout: .seconds(15), rotateAfter: nil,
            liveness: LivenessSettings(quietPeriod: .seconds(30), pongTimeout: .seconds(10)), postponeSlack: postponeSlack)
        let driver = TestLinkDriver(fallback: .protocolPing, states: ConnectionStateBroadcaster())
        let request = WebSocketRequest(url: URL(string: "ws://127.0.0.1:9/test")!)
        return Task { await runner.run(id: 1, connector: server, request: request, driver: driver) }
    }
}

/// Sleeps that last until they are cancelled, recorded: in these tests no deadline is ever reached.
private final class RecordedSleeps: Sendable {
    private struct State {
        var sleeps: [Duration] = []
        var underWay = 0
    }

    private let state = Locked(State())

    /// How many sleeps were asked for.
    var sleepCount: Int { state.withLock { $0.sleeps.count } }
    /// How many sleeps have not ended yet.
    var underWay: Int { state.withLock { $0.underWay } }

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
        try await withTestTimeout(timeout, "sleep number \(number)") { [state] in
            while true {
                if let duration = state.withLock({ $0.sleeps.count >= number ? $0.sleeps[number - 1] : nil }) { return duration }
                try await TestTime.pollPause()
            }
        }
    }
}

/// A ``LinkExecutor`` that records what the runner asks of it. It runs the scope where it is; its sleeps last until
/// they are cancelled. It offers `timer` as the link's own, if given.
private final class RecordingLinkExecutor: LinkExecutor {
    private let runCount = Locked(0)
    private let sleeps = RecordedSleeps()
    private let timer: RecordingLinkTimer?

    init(timer: RecordingLinkTimer? = nil) {
        self.timer = timer
    }

    /// How many scopes ran on it.
    var runs: Int { runCount.withLock { $0 } }
    /// How many sleeps were asked for.
    var sleepCount: Int { sleeps.sleepCount }
    /// How many sleeps have not ended yet.
    var sleepsUnderWay: Int { sleeps.underWay }

    func run<Value: Sendable>(_ operation: @Sendable () async -> Value) async -> Value {
        runCount.withLock { $0 += 1 }
        return await operation()
    }

    func sleep(for duration: Duration) async throws {
        try await sleeps.sleep(for: duration)
    }

    func makeTimer() async -> (any LinkTimer)? { timer }

    /// Waits for the `number`th sleep (counting from 1) and returns its duration.
    func waitForSleep(_ number: Int, timeout: Double = 5) async throws -> Duration {
        try await sleeps.waitForSleep(number, timeout: timeout)
    }
}

/// A ``LinkTimer`` that records its sleeps (which last until cancelled) and every move of its deadline.
private final class RecordingLinkTimer: LinkTimer {
    let sleeps = RecordedSleeps()
    private let state = Locked((reschedules: [Duration](), closed: false))

    /// Whether the link released it.
    var closed: Bool { state.withLock { $0.closed } }

    func sleep(for duration: Duration) async throws {
        try await sleeps.sleep(for: duration)
    }

    func reschedule(after duration: Duration) {
        state.withLock { $0.reschedules.append(duration) }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    /// Waits for the `number`th move of the deadline (counting from 1) and returns how far ahead it was moved.
    func waitForReschedule(_ number: Int, timeout: Double = 5) async throws -> Duration {
        try await withTestTimeout(timeout, "reschedule number \(number)") { [state] in
            while true {
                if let duration = state.withLock({ $0.reschedules.count >= number ? $0.reschedules[number - 1] : nil }) { return duration }
                try await TestTime.pollPause()
            }
        }
    }
}
