import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import RealtimeStore

/// A stream refused after an outage: the store heals from the outage's start, not from the refusal.
@Suite("RealtimeStore failed streams")
struct StoreFailedStreamTests {
    /// Waits until the notifier shows `state`.
    static func waitFor(_ state: NotifierConnectionState, on notifier: BackendNotifier) async throws {
        try await withTestTimeout(10, "the notifier \(state)") {
            while await notifier.connectionState != state { try await TestTime.pollPause() }
        }
    }

    @Test("a stream refused five minutes into an outage, restarted by the foreground, is backfilled from the outage's start")
    @MainActor
    func refusedAfterOutage() async throws {
        let (harness, script, run, first) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        let loads = script.calls.count
        func wall() -> Date { StoreHarness.loadedAt.addingTimeInterval(Double(harness.clock.now.offset.components.seconds)) }
        harness.transport.setState(.connected)
        try await Self.waitFor(.live, on: harness.notifier)
        // T0: the link is lost; back five minutes later, the resubscription is refused.
        let lostAt = wall()
        harness.transport.setState(.reconnecting(attempt: 1, delay: .seconds(1)), failure: "reset", lostAt: lostAt)
        try await Self.waitFor(.reconnecting, on: harness.notifier)
        harness.clock.advance(by: .seconds(300))
        harness.transport.setState(.connected)
        try await Self.waitFor(.live, on: harness.notifier)
        first.finish(throwing: RealtimeError.subscriptionRejected(errorType: "MaxSubscriptionsReachedError", message: nil))
        try await harness.flush(until: "stale after the refusal") { $0.isStale(.devicePresence) }
        let refusedAt = wall()
        #expect(script.calls.count == loads, "no backfill while the stream is down")
        // Later the app comes back over the kept connection: the failed stream restarts and goes live.
        harness.clock.advance(by: .seconds(10))
        await harness.notifier.enterForeground()
        let second = try await harness.transport.waitForSubscription(
            after: first.index, where: { $0 == .channel("vortex-app/user/u-1/device/*") })
        second.send(.live)
        try await harness.flush(until: "healed after the restart") { !$0.isStale(.devicePresence) }
        #expect(script.calls.count == loads + 1)
        let since = try #require(script.calls.last)
        #expect(since <= lostAt, "from the outage's start (\(lostAt)), not the refusal (\(refusedAt)): \(since)")
        #expect(since >= lostAt.addingTimeInterval(-2), "the margin before it, no more")
    }
}
