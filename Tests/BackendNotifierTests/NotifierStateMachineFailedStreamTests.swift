import Foundation
import SubscriberCore
import Testing

@testable import BackendNotifier

/// A stream that fails for good owes its observers the window from where it may have missed events: its link's loss,
/// when it failed before it was live again after an outage, else its failure. The restart that gets it live reports
/// that window as `resumed(gap:)`, the margin before its start included, whatever restarted it. A run stopped before
/// it was live again after an outage (a switch's cut-over, a suspension, a restart) owes that outage the same way.
@Suite("NotifierStateMachine failed streams")
struct NotifierStateMachineFailedStreamTests {
    typealias Machine = NotifierStateMachine
    typealias Script = NotifierStateMachineTests.Script

    static let start = NotifierStateMachineTests.start
    static func run(_ upstream: Upstream, _ serial: Int) -> Machine.RunID { NotifierStateMachineTests.run(upstream, serial) }
    static let refused = RealtimeError.subscriptionRejected(errorType: "MaxSubscriptionsReachedError", message: nil)
    /// When the outage began: the lost link's last frame, 10 s in.
    static let lostAt = start.addingTimeInterval(10)

    /// Device observed and live on AppSync (run 1), its link lost at ``lostAt`` (reported 2 s later), and back after
    /// five minutes when `reconnected` (a real transport reports `connected` before its resubscription is confirmed or
    /// refused; the review's sketch does not).
    static func outage(reconnected: Bool) -> Script {
        let script = Script()
        script.given(.observed(.device), .upstreamLive(run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: lostAt),
            after: 12)
        if reconnected { script.on(.transportStateChanged(.connected, transport: 0), after: 300) } else { script.now += 300 }
        return script
    }

    /// ``outage(reconnected:)``, then the device's resubscription is refused, 301 s after its link was lost.
    static func failedAfterOutage(reconnected: Bool) -> Script {
        let script = outage(reconnected: reconnected)
        script.on(.upstreamEnded(run(.device, 1), refused), after: 1)
        return script
    }

    /// The ways a failed stream is restarted: the foreground over a kept connection, an update with the same identity,
    /// and a new observer. Each returns the restarted run's live report.
    enum Restart: CaseIterable {
        case foreground, update, observer

        func restart(_ script: Script) throws -> [Machine.Action] {
            let started: [Machine.Action]
            switch self {
            case .foreground:
                started = script.on(.enteredForeground(operation: 7), after: 60)
            case .update:
                let update = script.on(.updateRequested(NotifierStateMachineTests.user1, operation: 7), after: 60)
                started = script.on(.disconnected(token: try #require(disconnectToken(update))))
            case .observer:
                started = script.on(.observed(.device), after: 60)
            }
            return script.on(.upstreamLive(try #require(startedRun(started))), after: 1)
        }
    }

    static func startedRun(_ actions: [Machine.Action], _ upstream: Upstream = .device) -> Machine.RunID? {
        actions.lazy.compactMap { if case .startUpstream(let start) = $0, start.upstream == upstream { start.run } else { nil } }.first
    }

    static func timerToken(_ timer: Machine.Timer, _ actions: [Machine.Action]) -> Int? {
        actions.lazy.compactMap { if case .armTimer(timer, let token, _) = $0 { token } else { nil } }.first
    }

    static func disconnectToken(_ actions: [Machine.Action]) -> Int? {
        actions.lazy.compactMap { if case .disconnect(_, let token) = $0 { token } else { nil } }.first
    }

    /// Restarts the device stream from the foreground a minute later and returns its new run.
    static func foreground(_ script: Script, operation: Int = 7) throws -> Machine.RunID {
        try #require(startedRun(script.on(.enteredForeground(operation: operation), after: 60)))
    }

    /// Updates to `identity` a minute later and returns the device stream's new run.
    static func update(_ script: Script, to identity: Machine.Identity = NotifierStateMachineTests.user1) throws -> Machine.RunID {
        let token = try #require(disconnectToken(script.on(.updateRequested(identity, operation: 7), after: 60)))
        return try #require(startedRun(script.on(.disconnected(token: token))))
    }

    /// Switches to GraphQL a minute later, the device's new run live a second after; returns the cut-over's actions.
    static func cutOver(_ script: Script, reason: TransportSwitchReason) throws -> [Machine.Action] {
        let target = NotifierStateMachineTests.graphql
        let run = try #require(
            startedRun(script.on(.switchRequested(target: target, reason: reason, onlyFromOtherDialect: false, operation: 7), after: 60)))
        let settle = try #require(timerToken(.switchSettle, script.on(.upstreamLive(run), after: 1)))
        return script.on(.timerFired(.switchSettle, token: settle), after: 0.5)
    }

    static func resumed(from start: Date, to end: Date, on transport: String = "appsync") -> [Machine.Action] {
        [.emit(.resumed(stream: "device", transport: transport, gap: GapWindow(start: start.addingTimeInterval(-2), end: end)))]
    }

    @Test(
        "a stream refused after an outage, restarted, reports resumed from the margin before its link was lost",
        arguments: [false, true], Restart.allCases)
    func failedAfterOutage(reconnected: Bool, restart: Restart) throws {
        let script = Self.failedAfterOutage(reconnected: reconnected)
        let live = try restart.restart(script)
        #expect(live == Self.resumed(from: Self.lostAt, to: script.now), "\(live)")
    }

    @Test("a restart that fails before it is live still owes the window; once reported, the next failure starts a new one")
    func owedUntilLive() throws {
        let script = Self.failedAfterOutage(reconnected: true)
        let first = try Self.foreground(script)
        script.on(.upstreamEnded(first, Self.refused), after: 5)
        let second = try Self.foreground(script, operation: 8)
        #expect(script.on(.upstreamLive(second), after: 1) == Self.resumed(from: Self.lostAt, to: script.now))
        script.on(.upstreamEnded(second, Self.refused), after: 100)
        let failedAt = script.now
        let third = try Self.foreground(script, operation: 9)
        #expect(script.on(.upstreamLive(third), after: 1) == Self.resumed(from: failedAt, to: script.now))
    }

    @Test("a stream that fails while live, restarted, reports resumed from the margin before its failure", arguments: Restart.allCases)
    func failedWhileLive(restart: Restart) throws {
        let script = Script()
        script.given(.observed(.device), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        // Ended without an error (GraphQL's complete) is a failure too.
        let failure = script.on(.upstreamEnded(Self.run(.device, 1), nil), after: 30)
        #expect(failure.contains(.emit(.streamFailed(stream: "device", transport: "appsync", error: Machine.endedByServer))))
        let failedAt = script.now
        let live = try restart.restart(script)
        #expect(live == Self.resumed(from: failedAt, to: script.now), "\(live)")
    }

    @Test("a run that was never live owes nothing for its failure: its restart reports live")
    func neverLive() throws {
        let script = Script()
        script.given(.observed(.device))
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: Self.lostAt),
            after: 12)
        script.on(.transportStateChanged(.connected, transport: 0), after: 300)
        script.on(.upstreamEnded(Self.run(.device, 1), Self.refused), after: 1)
        let run = try Self.foreground(script)
        #expect(script.on(.upstreamLive(run), after: 1) == [.emit(.live(stream: "device", transport: "appsync"))])
    }

    @Test("a run that went live after the outage began owes from its own failure, not from the transport's earlier loss")
    func liveAfterTheOutage() throws {
        let script = Script()
        script.given(.observed(.device))
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: Self.lostAt),
            after: 12)
        script.on(.upstreamLive(Self.run(.device, 1)), after: 300)
        script.on(.upstreamEnded(Self.run(.device, 1), Self.refused), after: 20)
        let failedAt = script.now
        let run = try Self.foreground(script)
        #expect(script.on(.upstreamLive(run), after: 1) == Self.resumed(from: failedAt, to: script.now))
    }

    @Test("outages one after another before the failure: the earliest loss is the window's start")
    func earliestOutage() throws {
        let script = Script()
        script.given(.observed(.device), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: Self.lostAt),
            after: 12)
        script.on(.transportStateChanged(.connected, transport: 0), after: 30)
        let later = script.now.addingTimeInterval(5)
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: later),
            after: 6)
        // A transport that does not say when it lost its link: the state's arrival is the best estimate.
        script.on(.transportStateChanged(.connecting, transport: 0), after: 6)
        script.on(.upstreamEnded(Self.run(.device, 1), Self.refused), after: 1)
        let run = try Self.foreground(script)
        #expect(script.on(.upstreamLive(run), after: 1) == Self.resumed(from: Self.lostAt, to: script.now))
    }

    @Test("a run whose subscription resumed after the outage owes from its own later failure, not from the outage")
    func resumedThenFailed() throws {
        let script = Self.failedAfterOutage(reconnected: true)
        // The same outage, but resumed before a later failure: replay it with the resume in between.
        let resumedScript = Script()
        resumedScript.given(.observed(.device), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        resumedScript.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: Self.lostAt),
            after: 12)
        resumedScript.on(.transportStateChanged(.connected, transport: 0), after: 300)
        #expect(resumedScript.on(.upstreamResumed(Self.run(.device, 1)), after: 1) == [])
        resumedScript.on(.upstreamEnded(Self.run(.device, 1), Self.refused), after: 3600)
        let failedAt = resumedScript.now
        let run = try Self.foreground(resumedScript)
        #expect(resumedScript.on(.upstreamLive(run), after: 1) == Self.resumed(from: failedAt, to: resumedScript.now))
        // Without the resume, the same failure owes the outage.
        let unresumed = try Self.foreground(script)
        #expect(script.on(.upstreamLive(unresumed), after: 1) == Self.resumed(from: Self.lostAt, to: script.now))
    }

    @Test("another run's resume (a switch's new run, an ended one) does not clear what the running one owes")
    func otherRunsResume() throws {
        let script = Script()
        script.given(.observed(.device), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: Self.lostAt),
            after: 12)
        script.on(.transportStateChanged(.connected, transport: 0), after: 300)
        script.on(.upstreamResumed(Self.run(.device, 9)), after: 1)
        script.on(.upstreamEnded(Self.run(.device, 1), Self.refused), after: 1)
        let run = try Self.foreground(script)
        #expect(script.on(.upstreamLive(run), after: 1) == Self.resumed(from: Self.lostAt, to: script.now))
    }

    @Test("a transport that does not say when it lost its link: the window starts when the loss was reported")
    func lossWithoutInstant() throws {
        let script = Script()
        script.given(.observed(.device), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        script.on(.transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0), after: 12)
        let reportedAt = script.now
        script.on(.transportStateChanged(.connected, transport: 0), after: 300)
        script.on(.upstreamEnded(Self.run(.device, 1), Self.refused), after: 1)
        let run = try Self.foreground(script)
        #expect(script.on(.upstreamLive(run), after: 1) == Self.resumed(from: reportedAt, to: script.now))
    }

    @Test(
        "a session that ends after an outage: the same identity restarted reports resumed from the margin before the loss",
        arguments: [Upstream.device, .role])
    func sessionEndedAfterOutage(endedBy ended: Upstream) throws {
        let script = Script()
        // device (run 1) was live when its link was lost; role (run 3) never got live: it owes nothing.
        script.given(
            .observed(.device), .observed(.role), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        script.on(
            .transportStateChanged(.reconnecting(attempt: 1, delay: .seconds(1)), transport: 0, lastFailure: "reset", lostAt: Self.lostAt),
            after: 12)
        script.on(.transportStateChanged(.connected, transport: 0), after: 300)
        let expiry = script.on(.upstreamEnded(Self.run(ended, ended == .device ? 1 : 3), .sessionExpired("refused")), after: 1)
        #expect(expiry.contains(.emit(.sessionExpired)))
        let token = try #require(
            Self.disconnectToken(script.on(.updateRequested(NotifierStateMachineTests.user1, operation: 7), after: 60)))
        let started = script.on(.disconnected(token: token)).compactMap { action -> Machine.RunID? in
            if case .startUpstream(let start) = action { start.run } else { nil }
        }
        #expect(started.map(\.upstream) == [.device, .role])
        #expect(script.on(.upstreamLive(started[0]), after: 1) == Self.resumed(from: Self.lostAt, to: script.now))
        #expect(script.on(.upstreamLive(started[1])) == [.emit(.live(stream: "role", transport: "appsync"))])
    }

    @Test("a session that ends while live keeps today's report: the restart is live (the expiry starts the app's window)")
    func sessionEndedWhileLive() throws {
        let script = Script()
        script.given(.observed(.device), .upstreamLive(Self.run(.device, 1)), .transportStateChanged(.connected, transport: 0))
        script.on(.upstreamEnded(Self.run(.device, 1), .sessionExpired("refused")), after: 30)
        let run = try Self.update(script)
        #expect(script.on(.upstreamLive(run), after: 1) == [.emit(.live(stream: "device", transport: "appsync"))])
    }

    @Test("another identity does not inherit a failed stream's window: its restart is live")
    func otherIdentity() throws {
        let script = Self.failedAfterOutage(reconnected: true)
        let run = try Self.update(script, to: NotifierStateMachineTests.user2)
        #expect(script.on(.upstreamLive(run), after: 1) == [.emit(.live(stream: "device", transport: "appsync"))])
    }

    @Test("a failover that restarts a stream refused after an outage reports its window at the cut-over, on the new transport")
    func switchRestarts() throws {
        let script = Self.failedAfterOutage(reconnected: true)
        let cutOver = try Self.cutOver(script, reason: .failover("down"))
        #expect(cutOver.contains(Self.resumed(from: Self.lostAt, to: script.now, on: "graphql")[0]), "\(cutOver)")
    }

    // MARK: Runs stopped before they resumed from an outage

    @Test("a requested switch cutting over a run not resumed from an outage reports its window; the switch's own is empty")
    func switchBeforeResumed() throws {
        let script = Self.outage(reconnected: true)
        let cutOver = try Self.cutOver(script, reason: .requested)
        #expect(cutOver.contains(Self.resumed(from: Self.lostAt, to: script.now, on: "graphql")[0]), "\(cutOver)")
        // The stream reported its outage: the switch over a connected transport adds no window of its own.
        let empty = GapWindow(start: script.now, end: script.now)
        let switched = script.on(.disconnected(token: try #require(Self.disconnectToken(cutOver))), after: 0.5)
        #expect(switched.contains(.emit(.transportSwitched(from: "appsync", to: "graphql", gap: empty, reason: .requested))))
    }

    @Test("suspended while cut off by an outage: the foreground's window starts at the loss, not the suspension", arguments: [false, true])
    func suspendedDuringOutage(reconnected: Bool) throws {
        let script = Self.outage(reconnected: reconnected)
        let grace = try #require(Self.timerToken(.backgroundGrace, script.on(.enteredBackground)))
        let suspending = script.on(.timerFired(.backgroundGrace, token: grace), after: 30)
        script.on(.disconnected(token: try #require(Self.disconnectToken(suspending))))
        let run = try Self.foreground(script)
        #expect(script.on(.upstreamLive(run), after: 1) == Self.resumed(from: Self.lostAt, to: script.now))
    }

    @Test(
        "stalled streams restarted during an outage: the same identity reports the window a stopped run owed, another is live",
        arguments: [NotifierStateMachineTests.user1, NotifierStateMachineTests.user2])
    func restartedDuringOutage(as identity: Machine.Identity) throws {
        let script = Self.outage(reconnected: true)
        // Role, observed after the outage, is refused before it is live: the streams stalled, so an update restarts them.
        let role = try #require(Self.startedRun(script.on(.observed(.role)), .role))
        script.on(.upstreamEnded(role, Self.refused), after: 1)
        let run = try Self.update(script, to: identity)
        let live = script.on(.upstreamLive(run), after: 1)
        let owed = identity == NotifierStateMachineTests.user1 ? Self.resumed(from: Self.lostAt, to: script.now) : nil
        #expect(live == owed ?? [.emit(.live(stream: "device", transport: "appsync"))], "\(live)")
    }
}
