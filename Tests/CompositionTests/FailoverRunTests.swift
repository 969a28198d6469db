import BackendNotifier
import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// The failover watch on scripted transports and a manual clock: a notifier with no observer, so every switch cuts
/// over at once, and transports whose connection states the test sets.
@Suite("RealtimeStack: failover watch")
struct FailoverRunTests {
    /// A notifier on a scripted transport, the watch over it, and the transports the watch made.
    final class Harness: Sendable {
        let clock = ManualClock()
        let notifier: BackendNotifier
        let first: ScriptedTransport
        let settings: RealtimeConfiguration.FailoverConfiguration
        /// Shared by every run the harness makes, as a stack shares it with its running watch.
        let phase = FailbackPhase()
        let monitor = DrivenNetworkPathMonitor(.satisfied(.wifi))
        private let made = Locked<[ScriptedTransport]>([])
        let scope = TaskScope()

        init(active: TransportDialect = .appSyncChannels) {
            var settings = RealtimeConfiguration.FailoverConfiguration()
            settings.enabled = true
            settings.unhealthyAfterSeconds = 45  // apart from the notifier's own 60 s network-error limit
            settings.failbackAfterSeconds = 300
            self.settings = settings
            first = ScriptedTransport(dialect: active)
            notifier = BackendNotifier(transport: first, userId: "u-1", organizationId: "o-1", clock: clock)
        }

        /// Every transport the watch made (switch targets and probes), in order.
        var transports: [ScriptedTransport] { made.withLock { $0 } }

        var run: FailoverRun {
            FailoverRun(
                notifier: notifier, settings: settings, preferred: .appsync, phase: phase,
                makeTransport: { [made] kind in
                    let transport = ScriptedTransport(dialect: kind == .appsync ? .appSyncChannels : .graphQL)
                    made.withLock { $0.append(transport) }
                    return transport
                }, pathMonitor: monitor, clock: clock, wallClock: .system, logger: Logger(label: "test"))
        }

        /// Runs the watch until the test ends.
        func start() -> Task<Void, Never> {
            let run = run
            return Task { await run.run() }
        }

        func waitForMade(_ count: Int) async throws {
            try await waitUntil("\(count) transport(s) made by the watch") { self.transports.count >= count }
        }

        /// Sets `connecting` and waits for the unhealthy deadline it arms: from then on the watch reads every state
        /// the test sets, in order (one set before it subscribed would reach it only as the current state).
        func waitUntilWatching(_ transport: ScriptedTransport) async throws {
            transport.setState(.connecting)
            try await clock.waitForSleeper(sleeping: .seconds(45))
        }

        /// Observes the notifier's connection events, starts the watch and waits until it reads `first`'s states.
        /// Cancel the returned task.
        func startWatchingFirst() async throws -> (events: AsyncStream<NotifierConnectionEvent>, watch: Task<Void, Never>) {
            let events = await notifier.connectionEvents()
            let watch = start()
            do { try await waitUntilWatching(first) } catch {
                watch.cancel()
                throw error
            }
            return (events, watch)
        }

        /// Probes AppSync to fail back to, until the returned task is cancelled, and waits for the first probe.
        func startProbing() async throws -> (probing: Task<Bool, Never>, first: ScriptedTransport) {
            let (run, scope) = (run, scope)
            let probing = Task { await run.waitUntilHealthy(.appsync, scope: scope) }
            do { try await waitForMade(1) } catch {
                probing.cancel()
                throw error
            }
            return (probing, transports[0])
        }

        /// Watches `first` (AppSync) until it fails over to GraphQL `unhealthyAfterSeconds` after `connecting`, and
        /// waits for the failback probe on AppSync to subscribe. Returns the GraphQL transport and the probe.
        func failOverAndProbe(_ watch: Task<Void, Never>) async throws -> (graphql: ScriptedTransport, probe: ScriptedTransport) {
            try await waitUntilWatching(first)
            clock.advance(by: .seconds(45))
            try await waitForMade(2)
            let (graphql, probe) = (transports[0], transports[1])
            _ = try await probe.waitForSubscription()
            #expect(await notifier.activeTransport as AnyObject === graphql)
            return (graphql, probe)
        }

        /// Failed over to GraphQL with the roles observed (so a switch must get their subscription live), and the probe
        /// connected, its `failbackAfterSeconds` deadline armed. The roles' stream is returned to keep it observed.
        func failOverObservedWithConnectedProbe(
            _ watch: Task<Void, Never>
        ) async throws -> (graphql: ScriptedTransport, roles: AsyncStream<RoleChangeOutput>) {
            let (graphql, probe) = try await failOverAndProbe(watch)
            let roles = await notifier.roleValues()
            _ = try await graphql.waitForSubscription()
            probe.setState(.connected)
            try await clock.waitForSleeper(sleeping: .seconds(300))
            return (graphql, roles)
        }

        /// The reason of the first failover the notifier reports.
        func firstFailoverReason(in events: AsyncStream<NotifierConnectionEvent>) async throws -> String? {
            try await withTestTimeout(5, "a failover") {
                for await event in events {
                    if case .transportSwitched(_, _, _, .failover(let problem)) = event { return problem }
                }
                return nil
            }
        }
    }

    @Test("the watch follows a switch it did not make: it fails over from the transport switched to, not the one left")
    func watchFollowsSwitch() async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        try await harness.waitUntilWatching(harness.first)
        // An operator's switch to GraphQL (as RealtimeStack.switchTransport does it) while the watch is on AppSync.
        let graphql = ScriptedTransport(dialect: .graphQL)
        try await harness.notifier.switchTransport(to: graphql, because: .requested, onlyFromOtherDialect: true)
        await harness.first.disconnect()
        // The watch left AppSync: its deadline there is disarmed, and cannot fire in the advance below.
        try await waitUntil("the watch on AppSync ended") { harness.clock.sleeperCount == 0 }
        // GraphQL cannot connect: the watch must see it and fail over to AppSync.
        try await harness.waitUntilWatching(graphql)
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(1)
        #expect(harness.transports[0].dialect == .appSyncChannels)
        try await waitUntil("the failover to AppSync") { harness.transports.count == 1 }
        #expect(await harness.notifier.activeTransport as AnyObject === harness.transports[0])
    }

    @Test(
        "a transport disconnected on request, signed out or with an expired session disarms the unhealthy timer; the watch goes on",
        arguments: [DisconnectReason.requested, .signedOut, .sessionExpired])
    func disconnectDisarms(reason: DisconnectReason) async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        harness.first.setState(.reconnecting(attempt: 1, delay: .seconds(1)))
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        // Suspended in the background, or signed out: no failover 45 s after the reconnect began.
        harness.first.setState(.disconnected(reason))
        try await waitUntil("the unhealthy timer disarmed") { harness.clock.sleeperCount == 0 }
        harness.clock.advance(by: .seconds(45))
        #expect(harness.transports.isEmpty, "a transport shut down since is not unhealthy")
        // Back (foreground, signed in again): the watch still works.
        harness.first.setState(.connecting)
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(1)
        #expect(harness.transports[0].dialect == .graphQL)
    }

    @Test("maxFailures counts established connections lost, not each failed attempt of one outage")
    func failedAttemptsAreOneOutage() async throws {
        let harness = Harness()
        let (events, watch) = try await harness.startWatchingFirst()
        defer { watch.cancel() }
        // Six fast-failing attempts of one outage, then the transport gives up. Had the attempts counted as failures,
        // the watch, which reads the states in order, would have failed over for them before reading the give-up.
        for attempt in 1...6 {
            harness.first.setState(.reconnecting(attempt: attempt, delay: .seconds(1)))
            harness.first.setState(.connecting)
        }
        harness.first.setState(.disconnected(.failed(.network("gone"))))
        let reason = try #require(try await harness.firstFailoverReason(in: events))
        #expect(reason.hasPrefix("transport gave up"), "six failed attempts are one outage, not six failures: \(reason)")
    }

    @Test("maxFailures established connections lost within the window fail over")
    func lostConnectionsFailOver() async throws {
        let harness = Harness()
        let (events, watch) = try await harness.startWatchingFirst()
        defer { watch.cancel() }
        for attempt in 1...5 {
            harness.first.setState(.connected)
            harness.first.setState(.reconnecting(attempt: attempt, delay: .seconds(1)))
        }
        try await harness.waitForMade(1)
        #expect(harness.transports[0].dialect == .graphQL)
        let reason = try #require(try await harness.firstFailoverReason(in: events))
        #expect(reason.hasPrefix("5 connections lost"), "\(reason)")
    }

    @Test("a failback probe that gives up is disconnected and made again later; the next one fails back")
    func probeRetries() async throws {
        let harness = Harness(active: .graphQL)
        let (probing, first) = try await harness.startProbing()
        defer { probing.cancel() }
        // Seen whether the probe observes its states before or after this: as a change, or as the current state.
        first.setState(.disconnected(.failed(.network("gone"))))
        try await waitUntil("the probe disconnected") { first.disconnectCount == 1 }
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(2)
        let second = harness.transports[1]
        try await waitUntil("the new probe subscribed") { !second.subscriptions.isEmpty }
        #expect(second.subscriptions.count == 1, "the new probe subscribes again")
        second.setState(.connected)
        try await harness.clock.waitForSleeper(sleeping: .seconds(300))
        harness.clock.advance(by: .seconds(300))
        #expect(try await probing.boundedValue() == true)
    }

    @Test("a failback probe follows the notifier's identity: a new user's probe is made at once, and none while signed out")
    func probeFollowsIdentity() async throws {
        let harness = Harness(active: .graphQL)
        let roleChannel: @Sendable (String) -> SubscriptionRequest = { .channel("vortex-app/user/\($0)/roleChanged") }
        let (probing, first) = try await harness.startProbing()
        defer { probing.cancel() }
        _ = try await first.waitForSubscription(where: { $0 == roleChannel("u-1") })

        // Another user: the probe for u-1 goes, and one for u-2 comes without waiting out `unhealthyAfterSeconds`.
        await harness.notifier.update(userId: "u-2", organizationId: "o-1")
        try await waitUntil("the u-1 probe disconnected") { first.disconnectCount == 1 }
        try await harness.waitForMade(2)
        let second = harness.transports[1]
        _ = try await second.waitForSubscription(where: { $0 == roleChannel("u-2") })

        // Signed out: the probe goes and none is made (a probe made now would be the third transport, with no
        // subscription for u-3 below).
        await harness.notifier.update(userId: nil, organizationId: nil)
        try await waitUntil("the u-2 probe disconnected") { second.disconnectCount == 1 }
        await harness.notifier.update(userId: "u-3", organizationId: "o-1")
        try await harness.waitForMade(3)
        let third = harness.transports[2]
        _ = try await third.waitForSubscription(where: { $0 == roleChannel("u-3") })
        third.setState(.connected)
        try await harness.clock.waitForSleeper(sleeping: .seconds(300))
        harness.clock.advance(by: .seconds(300))
        #expect(try await probing.boundedValue() == true)
        #expect(harness.transports.count == 3)
    }

    @Test("a failback probe ends when the notifier is shut down")
    func probeEndsWithNotifier() async throws {
        let harness = Harness(active: .graphQL)
        let (probing, first) = try await harness.startProbing()
        defer { probing.cancel() }
        _ = try await first.waitForSubscription()
        await harness.notifier.shutdown()
        #expect(try await probing.boundedValue() == false)
        #expect(first.disconnectCount == 1)
    }

    @Test("a no-op switch the app asks for while the watch merely watches does not restart it: the deadline holds")
    func noOpSwitchWhileWatching() async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        try await harness.waitUntilWatching(harness.first)
        harness.clock.advance(by: .seconds(30))
        // A remote-config refresh asking for the transport in use, as RealtimeStack.switchTransport does.
        // (The switch makes its target, AppSync, and finds it already active.)
        #expect(try await harness.run.requestSwitch(to: .appsync) == false, "nothing to restart")
        harness.clock.advance(by: .seconds(15))
        try await harness.waitForMade(2)
        #expect(harness.transports[1].dialect == .graphQL, "failed over 45 s after connecting, not postponed")
    }

    @Test("a no-op switch to the preferred transport does not end a failback: failing back is what it asks for")
    func noOpSwitchToPreferredKeepsFailback() async throws {
        let harness = Harness()
        // As a run marks it when it decides to fail over from AppSync; the app's request for AppSync runs first.
        harness.phase.begin()
        #expect(try await harness.run.requestSwitch(to: .appsync) == false)
        #expect(!harness.phase.isInterrupted)
    }

    @Test("a switch to the transport failed over to, asked for while probing to fail back, ends the failback")
    func requestedSwitchEndsFailback() async throws {
        let harness = Harness()
        var watch = harness.start()
        defer { watch.cancel() }
        let (graphql, probe) = try await harness.failOverAndProbe(watch)
        // The operator rolls back to GraphQL, already active (its target, made, is left unused): the stack must start
        // the watch again.
        let restart = try await harness.run.requestSwitch(to: .graphql)
        #expect(restart, "the failback under way ends")
        if restart {
            watch.cancel()
            watch = harness.start()
        }
        try await waitUntil("the probe disconnected") { probe.disconnectCount == 1 }
        // The watch goes on, on GraphQL: it fails over from it, never back for the failback it left.
        try await harness.waitUntilWatching(graphql)
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(4)
        #expect(harness.transports[3].dialect == .appSyncChannels)
        try await withTestTimeout(5, "the failover to AppSync") {
            while await harness.notifier.activeTransport as AnyObject !== harness.transports[3] { try await TestTime.pollPause() }
        }
        #expect(harness.transports.count == 4, "no probe: nothing to fail back to")
    }

    @Test("a switch asked for once the failover switch is done, before any probe, ends the failback that would follow")
    func requestedSwitchBeforeProbeEndsFailback() async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        // Signed out: the failover cuts over at once, and the run waits for a sign-in before it probes.
        await harness.notifier.update(userId: nil, organizationId: nil)
        try await harness.waitUntilWatching(harness.first)
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(1)
        let graphql = harness.transports[0]
        try await withTestTimeout(5, "the failover to GraphQL") {
            while await harness.notifier.activeTransport as AnyObject !== graphql { try await TestTime.pollPause() }
        }
        // GraphQL was active before the request and after it: only the failback under way makes the watch start again.
        #expect(try await harness.run.requestSwitch(to: .graphql), "the failback that would follow the failover ends")
        #expect(harness.transports.count == 2, "no probe was made")
    }

    @Test("a failback that fails is probed for again unhealthyAfterSeconds later")
    func failedFailbackProbesAgain() async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        // Observed from now on: the failback must get the role stream live on its target.
        let (graphql, roles) = try await harness.failOverObservedWithConnectedProbe(watch)
        harness.clock.advance(by: .seconds(300))
        try await harness.waitForMade(3)
        let target = harness.transports[2]
        #expect(target.dialect == .appSyncChannels)
        // Its role subscription fails: the failback is abandoned, GraphQL stays (and stays healthy).
        try await target.waitForSubscription().finish(throwing: RealtimeError.network("refused"))
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(4)
        let again = harness.transports[3]
        #expect(again.dialect == .appSyncChannels)
        _ = try await again.waitForSubscription()
        #expect(await harness.notifier.activeTransport as AnyObject === graphql)
        _ = roles
    }

    @Test("a failback switch that runs after a switch the app asked for (a no-op) is undone: the app's request wins")
    func failbackAfterRequestedSwitchIsUndone() async throws {
        let harness = Harness()
        var watch = harness.start()
        defer { watch.cancel() }
        let (_, roles) = try await harness.failOverObservedWithConnectedProbe(watch)
        // The probe is connected, one second short of healthy.
        harness.clock.advance(by: .seconds(299))
        // A switch (GraphQL to GraphQL) holds the notifier's queue until its role subscription is live.
        let holder = ScriptedTransport(dialect: .graphQL)
        let holding = Task { try await harness.notifier.switchTransport(to: holder, because: .requested) }
        let held = try await holder.waitForSubscription()
        // The operator asks for GraphQL (queued second), then the probe is healthy and the failback is asked (third).
        let run = harness.run
        let request = Task { try await run.requestSwitch(to: .graphql) }
        try await withTestTimeout(5, "the request queued") {
            while await harness.notifier.pendingOperationCount < 2 { try await TestTime.pollPause() }
        }
        harness.clock.advance(by: .seconds(1))
        try await withTestTimeout(5, "the failback queued") {
            while await harness.notifier.pendingOperationCount < 3 { try await TestTime.pollPause() }
        }
        held.send(.live)
        try await harness.clock.waitForSleeper(sleeping: .milliseconds(500))
        harness.clock.advance(by: .milliseconds(500))
        try await holding.boundedValue()
        // The request finds GraphQL active: a no-op that ends the failback (the stack starts the watch again).
        let restart = try await request.boundedValue()
        #expect(restart, "the failback under way ends")
        if restart {
            watch.cancel()
            watch = harness.start()
        }
        // The failback, queued already, runs; then the run switches to GraphQL again, as the operator asked.
        try await harness.waitForMade(4)
        let failback = harness.transports[3]
        #expect(failback.dialect == .appSyncChannels)
        try await failback.waitForSubscription().send(.live)
        try await harness.clock.waitForSleeper(sleeping: .milliseconds(500))
        harness.clock.advance(by: .milliseconds(500))
        try await harness.waitForMade(5)
        let back = harness.transports[4]
        #expect(back.dialect == .graphQL)
        try await back.waitForSubscription().send(.live)
        try await harness.clock.waitForSleeper(sleeping: .milliseconds(500))
        harness.clock.advance(by: .milliseconds(500))
        try await withTestTimeout(5, "the switch back to GraphQL") {
            while await harness.notifier.activeTransport as AnyObject !== back { try await TestTime.pollPause() }
        }
        _ = roles
    }

    @Test("a failback probe waits while the notifier is suspended or its session ended, and is made again once it runs")
    func probePausesWhileNotRunning() async throws {
        let harness = Harness(active: .graphQL)
        let roles = await harness.notifier.roleValues()
        _ = try await harness.first.waitForSubscription()
        let (probing, first) = try await harness.startProbing()
        defer { probing.cancel() }
        _ = try await first.waitForSubscription()
        // In the background past the grace: suspended, the probe goes.
        await harness.notifier.enterBackground()
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(30))
        try await waitUntil("the probe disconnected while suspended") { first.disconnectCount == 1 }
        #expect(harness.transports.count == 1, "no probe while suspended")
        // In the foreground: a probe at once (not `unhealthyAfterSeconds` later).
        await harness.notifier.enterForeground()
        try await harness.waitForMade(2)
        let second = harness.transports[1]
        _ = try await second.waitForSubscription()
        // The session expires: every upstream stops until an update, and so does the probe.
        let resubscribed = try await harness.first.waitForSubscription(after: 0)
        resubscribed.finish(throwing: RealtimeError.sessionExpired("token expired"))
        try await waitUntil("the probe disconnected once the session ended") { second.disconnectCount == 1 }
        #expect(harness.transports.count == 2, "no probe while the session is ended")
        await harness.notifier.update(userId: "u-1", organizationId: "o-1")
        try await harness.waitForMade(3)
        _ = try await harness.transports[2].waitForSubscription()
        _ = roles
    }
}
