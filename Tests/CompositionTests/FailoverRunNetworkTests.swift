import BackendNotifier
import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// The failover watch and the device's network path: without one, nothing is judged.
extension FailoverRunTests {
    @Test("without a network the unhealthy deadline waits: no timer, no failover; once back, a whole window")
    func noNetworkHoldsDeadline() async throws {
        let harness = Harness()
        let (events, watch) = try await harness.startWatchingFirst()
        defer { watch.cancel() }
        harness.clock.advance(by: .seconds(30))
        harness.monitor.update(.unsatisfied)
        try await waitUntil("the unhealthy deadline held") { harness.clock.sleeperCount == 0 }
        // The supervisor waits for the network and says it reconnects: no attempt, so nothing to judge.
        harness.first.setState(.reconnecting(attempt: 1, delay: .seconds(1)))
        harness.clock.advance(by: .seconds(45))
        #expect(harness.clock.sleeperCount == 0, "no timer while there is no network")
        #expect(harness.transports.isEmpty, "no failover while there is no network")
        // Back: the transport gets a whole window to reconnect, from now.
        harness.monitor.update(.satisfied(.wifi))
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.clock.advance(by: .seconds(44))
        #expect(harness.transports.isEmpty)
        harness.clock.advance(by: .seconds(1))
        try await harness.waitForMade(1)
        #expect(harness.transports[0].dialect == .graphQL)
        #expect(try await harness.firstFailoverReason(in: events) == "not connected for 45 s")
    }

    @Test("a transport that connects once the network is back is not failed over")
    func networkBackAndConnected() async throws {
        let harness = Harness()
        let (_, watch) = try await harness.startWatchingFirst()
        defer { watch.cancel() }
        harness.monitor.update(.unsatisfied)
        try await waitUntil("the unhealthy deadline held") { harness.clock.sleeperCount == 0 }
        harness.monitor.update(.satisfied(.cellular))
        try await harness.clock.waitForSleeper(sleeping: .seconds(45))
        harness.first.setState(.connected)
        try await waitUntil("the unhealthy deadline disarmed") { harness.clock.sleeperCount == 0 }
        harness.clock.advance(by: .seconds(45))
        #expect(harness.transports.isEmpty)
    }

    @Test("connections lost while there is no network are not failures: maxFailures counts none of them")
    func lossesWithoutNetworkAreNotFailures() async throws {
        let harness = Harness()
        let (events, watch) = try await harness.startWatchingFirst()
        defer { watch.cancel() }
        harness.monitor.update(.unsatisfied)
        try await waitUntil("the unhealthy deadline held") { harness.clock.sleeperCount == 0 }
        for attempt in 1...5 {
            harness.first.setState(.connected)
            harness.first.setState(.reconnecting(attempt: attempt, delay: .seconds(1)))
        }
        // Read after the losses (the watch reads states in order): had they counted, it would have failed over first.
        harness.first.setState(.disconnected(.failed(.network("gone"))))
        let reason = try #require(try await harness.firstFailoverReason(in: events))
        #expect(reason.hasPrefix("transport gave up"), "five losses to a lost network are no failures: \(reason)")
    }

    @Test("the stack's watch follows the stack's network path monitor")
    func stackGivesWatchItsPathMonitor() async throws {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        let monitor = DrivenNetworkPathMonitor(.satisfied(.wifi))
        let stack = try RealtimeStack(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: ScriptedWebSocketServer(), networkPathMonitor: monitor)
        #expect(await stack.failoverRun.pathMonitor as? DrivenNetworkPathMonitor === monitor)
        await stack.shutdown()
    }
}
