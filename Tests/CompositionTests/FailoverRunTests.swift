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
                notifier: notifier, settings: settings, preferred: .appsync,
                makeTransport: { [made] kind in
                    let transport = ScriptedTransport(dialect: kind == .appsync ? .appSyncChannels : .graphQL)
                    made.withLock { $0.append(transport) }
                    return transport
                }, clock: clock, wallClock: .system, logger: Logger(label: "test"))
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
}
