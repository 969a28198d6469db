import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// A stream whose resubscription is refused after an outage: the app hears of the whole window it may have missed
/// events in, from the outage's start, once the stream is restarted and live again.
@Suite("BackendNotifier failed streams")
struct NotifierFailedStreamTests {
    /// The first `resumed` window of the device stream.
    static func deviceWindow(_ events: ValueProbe<NotifierConnectionEvent>) -> GapWindow? {
        events.received.lazy.compactMap { event -> GapWindow? in
            if case .resumed(stream: "device", _, let gap) = event { gap } else { nil }
        }.first
    }

    /// A notifier whose device stream is live on a connected transport, then loses its link at the returned instant
    /// (the transport reports `reconnecting`), with probes of its connection events and states.
    static func liveThenLost() async throws -> (
        harness: NotifierHarness, events: ValueProbe<NotifierConnectionEvent>, states: ValueProbe<NotifierConnectionState>,
        device: ScriptedTransport.Subscription, lostAt: Date
    ) {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let states = ValueProbe(await harness.notifier.connectionStates())
        _ = ValueProbe(await harness.notifier.devicePresenceValues())
        let device = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        device.send(.live)
        harness.transport.setState(.connected)
        try await withTestTimeout(5, "the device stream live") {
            while !events.received.contains(.live(stream: "device", transport: "appsync")) { try await TestTime.pollPause() }
        }
        try await NotifierConnectionStateTests.waitFor(states, .live)
        // T0: the link is lost; the subscription is interrupted since then.
        let lostAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(harness.clock.now.offset.components.seconds))
        harness.transport.setState(.reconnecting(attempt: 1, delay: .seconds(1)), failure: "reset", lostAt: lostAt)
        try await NotifierConnectionStateTests.waitFor(states, .reconnecting)
        return (harness, events, states, device, lostAt)
    }

    /// The device subscription is refused (the notifier reports `streamFailed`); the app comes back over the kept
    /// connection and the restarted subscription is confirmed live.
    static func refuseAndRestart(
        _ harness: NotifierHarness, _ events: ValueProbe<NotifierConnectionEvent>, _ device: ScriptedTransport.Subscription,
        after pause: Duration = .zero
    ) async throws {
        let refused = RealtimeError.subscriptionRejected(errorType: "MaxSubscriptionsReachedError", message: "too many")
        device.finish(throwing: refused)
        try await withTestTimeout(5, "streamFailed") {
            while !events.received.contains(.streamFailed(stream: "device", transport: "appsync", error: refused)) {
                try await TestTime.pollPause()
            }
        }
        harness.clock.advance(by: pause)
        await harness.notifier.enterForeground()
        let restarted = try await harness.transport.waitForSubscription(after: device.index, where: NotifierHarness.channel("device/*"))
        restarted.send(.live)
    }

    @Test(
        "a stream refused after a five-minute outage, restarted by enterForeground, reports resumed from the outage's start",
        arguments: [false, true])
    func refusedAfterOutage(reconnected: Bool) async throws {
        let (harness, events, states, device, lostAt) = try await Self.liveThenLost()
        harness.clock.advance(by: .seconds(300))
        if reconnected {
            // A real transport is connected again before its resubscription is refused.
            harness.transport.setState(.connected)
            try await NotifierConnectionStateTests.waitFor(states, .live)
        }
        // Refused; a minute later the app comes back over the kept connection and the failed stream restarts.
        try await Self.refuseAndRestart(harness, events, device, after: .seconds(60))
        // Its report: `resumed` with the window, or (the defect) a second plain `live`.
        let live = NotifierConnectionEvent.live(stream: "device", transport: "appsync")
        try await withTestTimeout(5, "the restarted stream's report") {
            while Self.deviceWindow(events) == nil && events.received.filter({ $0 == live }).count < 2 { try await TestTime.pollPause() }
        }
        let gap = try #require(Self.deviceWindow(events), "\(events.received)")
        #expect(gap.start <= lostAt, "the window covers the outage: \(gap)")
        #expect(gap.start == lostAt.addingTimeInterval(-2), "from the margin before the outage began")
        #expect(gap.end == lostAt.addingTimeInterval(360))
    }

    @Test("a stream that resumed after the outage and is refused an hour later owes from its failure, not the outage")
    func resumedThenRefused() async throws {
        let (harness, events, states, device, lostAt) = try await Self.liveThenLost()
        harness.clock.advance(by: .seconds(300))
        harness.transport.setState(.connected)
        try await NotifierConnectionStateTests.waitFor(states, .live)
        // The transport resumed the subscription: its window goes to the app, and nothing is owed for the outage.
        device.send(.resumed(gap: GapWindow(start: lostAt, end: lostAt.addingTimeInterval(300))))
        try await withTestTimeout(5, "the transport's resumed") {
            while Self.deviceWindow(events) == nil { try await TestTime.pollPause() }
        }
        harness.clock.advance(by: .seconds(3600))
        try await Self.refuseAndRestart(harness, events, device)
        let windows = { @Sendable () -> [GapWindow] in
            events.received.compactMap { if case .resumed(stream: "device", _, let gap) = $0 { gap } else { nil } }
        }
        try await withTestTimeout(5, "the restarted stream's window") { while windows().count < 2 { try await TestTime.pollPause() } }
        let failedAt = lostAt.addingTimeInterval(3900)
        #expect(windows().last?.start == failedAt.addingTimeInterval(-2), "from the failure: \(windows())")
    }
}
