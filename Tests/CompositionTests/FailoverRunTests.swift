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

        /// Checks that the watch makes no transport within a short real-time wait.
        func expectNoneMade(_ comment: Comment, count: Int = 0) async throws {
            try await Task.sleep(for: .milliseconds(300))
            #expect(transports.count == count, comment)
        }
    }

    /// Yields a while so the watch reads the states set so far.
    static func settle() async throws { try await Task.sleep(for: .milliseconds(100)) }

    @Test("the watch follows a switch it did not make: it fails over from the transport switched to, not the one left")
    func watchFollowsSwitch() async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        try await Self.settle()
        // An operator's switch to GraphQL (as RealtimeStack.switchTransport does it) while the watch is on AppSync.
        let graphql = ScriptedTransport(dialect: .graphQL)
        try await harness.notifier.switchTransport(to: graphql, because: .requested, onlyFromOtherDialect: true)
        await harness.first.disconnect()
        try await Self.settle()
        // GraphQL cannot connect: the watch must see it and fail over to AppSync.
        graphql.setState(.connecting)
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
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
        try await Self.settle()
        harness.first.setState(.reconnecting(attempt: 1, delay: .seconds(1)))
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        // Suspended in the background, or signed out: no failover 45 s after the reconnect began.
        harness.first.setState(.disconnected(reason))
        try await waitUntil("the unhealthy timer disarmed") { harness.clock.sleeperCount == 0 }
        harness.clock.advance(by: .seconds(45))
        try await harness.expectNoneMade("a transport shut down since is not unhealthy")
        // Back (foreground, signed in again): the watch still works.
        harness.first.setState(.connecting)
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(1)
        #expect(harness.transports[0].dialect == .graphQL)
    }

    @Test("maxFailures counts established connections lost, not each failed attempt of one outage")
    func failuresAreLostConnections() async throws {
        let harness = Harness()
        let watch = harness.start()
        defer { watch.cancel() }
        try await Self.settle()
        // Five fast-failing attempts of one outage: only unhealthyAfterSeconds may fail over.
        harness.first.setState(.connecting)
        for attempt in 1...6 {
            harness.first.setState(.reconnecting(attempt: attempt, delay: .seconds(1)))
            harness.first.setState(.connecting)
        }
        try await harness.expectNoneMade("six failed attempts are one outage, not six failures")
        // Five established connections lost within the window: fail over.
        for attempt in 1...5 {
            harness.first.setState(.connected)
            harness.first.setState(.reconnecting(attempt: attempt, delay: .seconds(1)))
        }
        try await harness.waitForMade(1)
        #expect(harness.transports[0].dialect == .graphQL)
    }

    @Test("a failback probe that gives up is disconnected and made again later; the next one fails back")
    func probeRetries() async throws {
        let harness = Harness(active: .graphQL)
        let run = harness.run
        let probing = Task { await run.waitUntilHealthy(.appsync, scope: harness.scope) }
        defer { probing.cancel() }
        try await harness.waitForMade(1)
        let first = harness.transports[0]
        try await Self.settle()
        first.setState(.disconnected(.failed(.network("gone"))))
        try await waitUntil("the probe disconnected") { first.disconnectCount == 1 }
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.clock.advance(by: .seconds(45))
        try await harness.waitForMade(2)
        let second = harness.transports[1]
        try await Self.settle()
        #expect(second.subscriptions.count == 1, "the new probe subscribes again")
        second.setState(.connected)
        try await harness.clock.waitForSleeper(sleeping: .seconds(300))
        harness.clock.advance(by: .seconds(300))
        #expect(try await probing.boundedValue() == true)
    }
}
