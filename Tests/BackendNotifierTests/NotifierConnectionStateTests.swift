import Foundation
import MetricsTestKit
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 10 item 3: one connection picture for the app, following whichever transport is active; the seeds' error
/// vocabulary; metrics that follow the active transport.
@Suite("BackendNotifier connection state")
struct NotifierConnectionStateTests {
    static func waitFor(_ probe: ValueProbe<NotifierConnectionState>, _ state: NotifierConnectionState) async throws {
        try await withTestTimeout(5, "state \(state)") {
            while probe.received.last != state { try await TestTime.pollPause() }
        }
    }

    @Test("states follow the transport (connecting, live, reconnecting, offline) and the app lifecycle (suspended)")
    func statesFollowTheTransport() async throws {
        let harness = NotifierHarness()
        let states = ValueProbe(await harness.notifier.connectionStates())
        try await Self.waitFor(states, .offline)
        _ = ValueProbe(await harness.notifier.roleValues())
        _ = try await harness.transport.waitForSubscription()
        harness.transport.setState(.connecting)
        try await Self.waitFor(states, .connecting)
        harness.transport.setState(.connected)
        try await Self.waitFor(states, .live)
        harness.transport.setState(.reconnecting(attempt: 1, delay: .seconds(10)))
        try await Self.waitFor(states, .reconnecting)
        harness.transport.setState(.connected)
        try await Self.waitFor(states, .live)
        await harness.notifier.enterBackground()
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(30))
        try await Self.waitFor(states, .suspended)
        #expect(Array(states.received.prefix(6)) == [.offline, .connecting, .live, .reconnecting, .live, .suspended])
    }

    @Test("after a switch the state and the metrics follow the new transport, not the old one")
    func stateAndMetricsFollowTheSwitch() async throws {
        let harness = NotifierHarness()
        let states = ValueProbe(await harness.notifier.connectionStates())
        _ = ValueProbe(await harness.notifier.roleValues())
        _ = try await harness.transport.waitForSubscription()
        harness.transport.setState(.connected)
        try await Self.waitFor(states, .live)
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let switching = Task { try await harness.notifier.switchTransport(to: graphQL) }
        try await graphQL.waitForSubscription().send(.live)
        try await harness.clock.settleSwitch()
        try await switching.boundedValue()
        graphQL.setState(.connecting)
        try await Self.waitFor(states, .connecting)
        harness.transport.setState(.reconnecting(attempt: 1, delay: .seconds(1)))
        graphQL.setState(.connected)
        try await Self.waitFor(states, .live)
        graphQL.setState(.reconnecting(attempt: 1, delay: .seconds(1)))
        try await Self.waitFor(states, .reconnecting)
        try await withTestTimeout(5, "graphql metrics") {
            while harness.metrics.counterTotal(label: "vortex_realtime_reconnects_total", transport: "graphql") < 1 {
                try await TestTime.pollPause()
            }
        }
        #expect(harness.metrics.counterTotal(label: "vortex_realtime_connection_attempts_total", transport: "graphql") == 1)
        #expect(harness.metrics.counterTotal(label: "vortex_realtime_reconnects_total", transport: "appsync") == 0)
    }

    @Test(
        "networkError: once when offline longer than the limit, with the transport's last failure; again only after being live; at once when the policy gives up"
    )
    func networkError() async throws {
        let harness = NotifierHarness { $0.networkErrorAfter = .seconds(5) }
        let events = ValueProbe(await harness.notifier.connectionEvents())
        _ = ValueProbe(await harness.notifier.roleValues())
        _ = try await harness.transport.waitForSubscription()
        harness.transport.setState(.reconnecting(attempt: 1, delay: .seconds(10)), failure: "open failed: refused")
        try await harness.clock.waitForSleeper(sleeping: .seconds(5))
        harness.clock.advance(by: .seconds(5))
        let first = try await events.next()
        guard case .networkError = first else { Issue.record("expected networkError, got \(first)"); return }
        #expect(first.vortexError == .networkError("no live connection for 5.0 seconds; last attempt: open failed: refused"))
        harness.transport.setState(.connected)
        harness.transport.setState(.disconnected(.failed(.reconnectAttemptsExhausted(3))))
        let second = try await events.next()
        #expect(second == .networkError(RealtimeError.reconnectAttemptsExhausted(3).description))
        #expect(
            VortexError(.subscriptionRejected(errorType: "Unauthorized", message: nil)) == .error("subscription rejected: Unauthorized"))
    }
}

extension TestMetrics {
    /// The total of the counter named `label` for `transport`.
    func counterTotal(label: String, transport: String) -> Int64 {
        counterTotal(label: label, dimensions: [("transport", transport)])
    }
}
