import Foundation
import SubscriberCore
import Testing

@testable import BackendNotifier

/// A transport switch on its own (``TransportSwitch``): the new runs' reports and observers leaving in, what is left
/// to do out, and the window the switch reports.
@Suite("TransportSwitch")
struct TransportSwitchTests {
    typealias Run = NotifierStateMachine.Run
    typealias RunID = NotifierStateMachine.RunID

    static let graphql = NotifierStateMachine.TransportRef(id: 1, name: "graphql", dialect: .graphQL)
    static let appsync = NotifierStateMachine.TransportRef(id: 0, name: "appsync", dialect: .appSyncChannels)
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func run(_ upstream: Upstream, _ serial: Int, live: Bool = false) -> Run {
        Run(id: RunID(upstream: upstream, serial: serial), transport: appsync, live: live)
    }

    /// A switch to GraphQL preparing new runs for `upstreams` (serials 10, 11, …), each replacing a live old run.
    static func preparing(
        _ upstreams: [Upstream], reason: TransportSwitchReason = .requested, oldTransportDown: Bool = false
    ) -> TransportSwitch {
        var change = TransportSwitch(
            operation: 1, id: 2, target: graphql, reason: reason, startedAt: start, oldTransportDown: oldTransportDown)
        for (offset, upstream) in upstreams.enumerated() {
            change.prepare(
                Run(id: RunID(upstream: upstream, serial: 10 + offset), transport: graphql), replacing: run(upstream, offset, live: true))
        }
        return change
    }

    /// A dropped run and what is left to do, comparable (`[:]`: nothing dropped).
    static func outcome(_ dropped: (run: RunID, progress: TransportSwitch.Progress)?) -> [RunID: TransportSwitch.Progress] {
        dropped.map { [$0.run: $0.progress] } ?? [:]
    }

    @Test("the old transport stays intact only if it was up and every replaced run was live")
    func oldIntact() {
        #expect(Self.preparing([.device, .role]).oldIntact)
        #expect(!Self.preparing([.device], oldTransportDown: true).oldIntact)
        var notLive = Self.preparing([.device])
        notLive.prepare(Self.run(.role, 11), replacing: Self.run(.role, 1, live: false))
        #expect(!notLive.oldIntact)
        var noOldRun = Self.preparing([.device])
        noOldRun.prepare(Self.run(.role, 11), replacing: nil)
        #expect(!noOldRun.oldIntact)
        var broke = Self.preparing([.device])
        broke.oldBroke()
        #expect(!broke.oldIntact)
        #expect(broke.stage == .preparing(waiting: [.device]))
    }

    @Test("new runs going live: waiting until the last, then all live; other runs and repeats change nothing")
    func runsGoingLive() {
        var change = Self.preparing([.device, .organization])
        #expect(change.runLive(RunID(upstream: .device, serial: 3)) == nil, "an old run")
        #expect(change.runLive(RunID(upstream: .role, serial: 10)) == nil, "no new run for the upstream")
        #expect(change.runLive(RunID(upstream: .device, serial: 10)) == .waiting)
        #expect(change.prepared[.device]?.live == true)
        #expect(change.runLive(RunID(upstream: .device, serial: 10)) == nil, "already live")
        #expect(change.runLive(RunID(upstream: .organization, serial: 11)) == .allLive)
        #expect(change.stage == .preparing(waiting: []))
    }

    @Test("observers leaving: the last waiting run leaves the rest live, the last run leaves nothing to switch")
    func observersLeaving() {
        var change = Self.preparing([.device, .organization, .archive])
        _ = change.runLive(RunID(upstream: .device, serial: 10))
        #expect(Self.outcome(change.drop(.role)) == [:])
        #expect(Self.outcome(change.drop(.device)) == [RunID(upstream: .device, serial: 10): .waiting], "live already; two still wait")
        #expect(Self.outcome(change.drop(.organization)) == [RunID(upstream: .organization, serial: 11): .waiting])
        _ = change.runLive(RunID(upstream: .archive, serial: 12))
        #expect(Self.outcome(change.drop(.archive)) == [RunID(upstream: .archive, serial: 12): .nothingPrepared])

        var waitingOnOne = Self.preparing([.device, .organization])
        _ = waitingOnOne.runLive(RunID(upstream: .device, serial: 10))
        #expect(Self.outcome(waitingOnOne.drop(.organization)) == [RunID(upstream: .organization, serial: 11): .allLive])

        var settling = Self.preparing([.device, .organization])
        _ = settling.runLive(RunID(upstream: .device, serial: 10))
        _ = settling.runLive(RunID(upstream: .organization, serial: 11))
        #expect(Self.outcome(settling.drop(.device)) == [RunID(upstream: .device, serial: 10): .waiting], "settling already")
    }

    @Test("released or abandoned, a switch answers no more reports; abandoning gives its runs back in upstream order")
    func afterPreparing() {
        var released = Self.preparing([.device])
        released.release(Self.appsync, token: 5, cutOverAt: Self.start)
        #expect(!released.isPrepared(RunID(upstream: .device, serial: 10)))
        #expect(released.runLive(RunID(upstream: .device, serial: 10)) == nil)
        #expect(Self.outcome(released.drop(.device)) == [:])
        released.oldBroke()
        #expect(released.oldIntact, "the overlap is over")

        var abandoned = Self.preparing([.revoke, .device, .archive])
        #expect(
            abandoned.abandon(token: 6, error: .disconnected) == [
                RunID(upstream: .device, serial: 11), RunID(upstream: .archive, serial: 12), RunID(upstream: .revoke, serial: 10),
            ])
        #expect(abandoned.prepared.isEmpty)
        #expect(abandoned.stage == .abandoning(token: 6, error: .disconnected))
    }

    @Test("the window: empty at the cut-over for a requested switch over an intact transport, else the gap rule")
    func window() {
        let cutOver = Self.start.addingTimeInterval(2)
        let end = Self.start.addingTimeInterval(3)
        let ruled = GapWindow(start: Self.start.addingTimeInterval(-5), end: end)
        #expect(Self.preparing([.device]).gap(cutOverAt: cutOver, now: end, safetyMargin: 5) == GapWindow(start: cutOver, end: cutOver))
        #expect(Self.preparing([.device], oldTransportDown: true).gap(cutOverAt: cutOver, now: end, safetyMargin: 5) == ruled)
        #expect(Self.preparing([.device], reason: .failback).gap(cutOverAt: cutOver, now: end, safetyMargin: 5) == ruled)
        let outage = Self.start.addingTimeInterval(-60)
        let down = TransportSwitch(
            operation: 1, id: 2, target: Self.graphql, reason: .failover("down"), startedAt: Self.start, oldTransportDown: true,
            oldDownSince: outage)
        #expect(down.gap(cutOverAt: cutOver, now: end, safetyMargin: 5) == GapWindow(start: outage.addingTimeInterval(-5), end: end))
    }
}
