import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import RealtimeStore

@Suite("RealtimeStore: fed by the notifier, healed by backfills")
struct RealtimeStoreTests {
    @Test("the store starts stale, loads everything through the backfill, then follows live events, newest per device")
    @MainActor
    func loadThenLive() async throws {
        let harness = StoreHarness()
        let script = BackfillScript()
        script.answer(.success([StoreHarness.presence("t-2", online: true, at: 1)]))
        harness.store.backfill(.devicePresence, script.fetch)
        #expect(harness.store.isStale(.devicePresence))
        let run = harness.startRun()
        defer { run.cancel() }
        let upstream = try await harness.deviceUpstream()
        upstream.send(.live)
        for second in 1...5 { upstream.send(json: StoreHarness.presenceJSON("t-1", online: second.isMultiple(of: 2), at: second)) }
        // Healed too: t-2 comes from the first load, and the second (from the stream's live) may still be running then.
        try await harness.flush(until: "t-1's newest presence, t-2 from the backfill, and both loads done") { store in
            store.devices["t-1"]?.presence?.payload.timestamp == "2026-11-26T10:00:05Z" && store.devices["t-2"] != nil
                && !store.isStale(.devicePresence)
        }
        // Everything at start, then again from the start once the stream is live (what was published in between).
        #expect(script.calls == [.distantPast, StoreHarness.loadedAt])
        #expect(!harness.store.isStale(.devicePresence))
        // Kinds without a registered backfill cannot be healed: they stay stale.
        #expect(harness.store.isStale(.plan))
        #expect(harness.store.devices["t-1"]?.presence?.payload.online == false)
        #expect(harness.store.devices["t-1"]?.presence?.origin == .live)
        #expect(harness.store.devices["t-2"]?.presence?.origin == .backfill)
        #expect(harness.store.statistics.applied == 6)
        // Fewer hops than changes: the five live events of t-1 did not take five hops.
        #expect(harness.store.statistics.flushes < harness.store.statistics.applied)
    }

    @Test("a resumed gap: stale from the gap's start; a failed backfill is reported and retried; success heals and clears it")
    @MainActor
    func gapHealed() async throws {
        let (harness, script, run, upstream) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        let loads = script.calls.count
        let failures = ValueRecorder(harness.store.backfillFailures())
        script.answer(.failure(BackfillScriptError()))
        script.answer(.failure(BackfillScriptError()))
        // The backfill returns the device's newer value, and an older one of t-1 that a live event already beat.
        script.answer(.success([StoreHarness.presence("t-1", online: false, at: 30), StoreHarness.presence("t-1", online: true, at: 5)]))
        let gap = GapWindow(start: Date(timeIntervalSince1970: 1_800_000_100), end: Date(timeIntervalSince1970: 1_800_000_160))
        upstream.send(.resumed(gap: gap))
        try await harness.flush(until: "the failure reported") { $0.lastBackfillFailure != nil }
        #expect(harness.store.isStale(.devicePresence))
        #expect(harness.store.lastBackfillFailure == BackfillFailure(kind: .devicePresence, attempt: 1, message: "HTTP 503"))
        try await harness.flush(until: "the retry healed the gap") { store in
            !store.isStale(.devicePresence) && store.devices["t-1"]?.presence?.payload.online == false
        }
        #expect(script.calls.count == loads + 3)
        #expect(script.calls.dropFirst(loads).allSatisfy { $0 == gap.start })
        #expect(harness.store.devices["t-1"]?.presence?.origin == .backfill)
        #expect(harness.store.statistics.older == 1)
        #expect(harness.store.statistics.backfillFailures == 2)
        // Each failure reaches the app as it happens, though a view may only see the newest.
        #expect(failures.values.map(\.attempt) == [1, 2])
    }

    @Test("another identity starts empty and stale, its streams subscribe for it, and it is loaded from the start")
    @MainActor
    func identityChange() async throws {
        let (harness, script, run, first) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        await harness.store.update(userId: "u-2", organizationId: "o-1")
        #expect(harness.store.devices.isEmpty)
        #expect(harness.store.isStale(.devicePresence))
        // An event of the previous identity that arrives late is not applied.
        first.send(json: StoreHarness.presenceJSON("t-1", online: false, at: 20))
        let second = try await harness.deviceUpstream(for: "u-2")
        second.send(.live)
        second.send(json: StoreHarness.presenceJSON("t-9", online: true, at: 30))
        try await harness.flush(until: "u-2's device, loaded") { store in
            store.devices["t-9"] != nil && !store.isStale(.devicePresence)
        }
        #expect(harness.store.devices["t-1"] == nil)
        #expect(script.calls.filter { $0 == .distantPast }.count == 2, "each identity loaded from the start")
    }

    @Test("sign-out empties the store and calls no backfill while signed out; signing in again loads from the start")
    @MainActor
    func signOutThenIn() async throws {
        let (harness, script, run, first) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        let loads = script.calls.count
        await harness.store.update(userId: nil, organizationId: nil)
        #expect(harness.store.devices.isEmpty)
        #expect(harness.store.isStale(.devicePresence))
        // Nothing of the signed-out identity is applied, and nothing is fetched while nobody is signed in.
        first.send(json: StoreHarness.presenceJSON("t-1", online: false, at: 20))
        try await harness.idle(steps: 20)
        #expect(harness.store.devices.isEmpty)
        #expect(script.calls.count == loads, "no backfill without an identity")
        await harness.store.update(userId: "u-1", organizationId: "o-1")
        let second = try await harness.transport.waitForSubscription(
            after: first.index, where: { $0 == .channel("vortex-app/user/u-1/device/*") })
        second.send(.live)
        second.send(json: StoreHarness.presenceJSON("t-3", online: true, at: 30))
        try await harness.flush(until: "signed in again and loaded") { store in
            store.devices["t-3"] != nil && !store.isStale(.devicePresence)
        }
        #expect(harness.store.devices["t-1"] == nil)
        #expect(script.calls.filter { $0 == .distantPast }.count >= 2)
    }

    @Test("an expired session: stale at once, no call meanwhile; the first live after recovery backfills from the expiry")
    @MainActor
    func expiredSession() async throws {
        let (harness, script, run, first) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        let loads = script.calls.count
        func wall() -> Date { StoreHarness.loadedAt.addingTimeInterval(Double(harness.clock.now.offset.components.seconds)) }
        first.finish(throwing: RealtimeError.sessionExpired("refused"))
        try await harness.flush(until: "stale after the expiry") { $0.isStale(.devicePresence) }
        let expiredAt = wall()
        #expect(script.calls.count == loads, "no backfill while the session is expired")
        // Later, the app signs in again on the notifier itself; the restarted upstream goes live.
        harness.clock.advance(by: .seconds(10))
        await harness.notifier.update(userId: "u-1", organizationId: "o-1")
        let second = try await harness.transport.waitForSubscription(
            after: first.index, where: { $0 == .channel("vortex-app/user/u-1/device/*") })
        second.send(.live)
        try await harness.flush(until: "healed after the recovery") { !$0.isStale(.devicePresence) }
        #expect(script.calls.count == loads + 1)
        let since = try #require(script.calls.last)
        // The window starts when the session expired, not when it recovered 10 s later.
        #expect(since <= expiredAt && since > expiredAt.addingTimeInterval(-2))
    }

    @Test("a stream the server ended: its kinds go stale at once; restarted, the first live backfills from the end")
    @MainActor
    func streamEndedByTheServer() async throws {
        let (harness, script, run, first) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        let loads = script.calls.count
        first.finish()  // ended without an error (GraphQL's complete)
        try await harness.flush(until: "stale after the end") { $0.isStale(.devicePresence) }
        #expect(script.calls.count == loads)
        await harness.notifier.update(userId: "u-1", organizationId: "o-1")  // the app restarts what stopped
        let second = try await harness.transport.waitForSubscription(
            after: first.index, where: { $0 == .channel("vortex-app/user/u-1/device/*") })
        second.send(.live)
        try await harness.flush(until: "healed after the restart") { !$0.isStale(.devicePresence) }
        #expect(script.calls.count == loads + 1)
    }

    @Test("a switch that reports a window backfills every kind from the window's start")
    @MainActor
    func switchWithWindow() async throws {
        let harness = StoreHarness()
        let presence = BackfillScript()
        let plans = Locked<[Date]>([])
        harness.store.backfill(.devicePresence, presence.fetch)
        harness.store.backfill(.plan) { since in
            plans.withLock { $0.append(since) }
            return []
        }
        let events = ValueRecorder(await harness.notifier.connectionEvents())
        let run = harness.startRun()
        defer { run.cancel() }
        // Every upstream of a transport goes live as it appears (the flushes also advance the clock past the switch's
        // settle).
        var live = Set<String>()
        func goLive(_ transport: ScriptedTransport) {
            for subscription in transport.subscriptions where live.insert("\(transport.name)-\(subscription.index)").inserted {
                subscription.send(.live)
            }
        }
        try await harness.flush(until: "loaded, and again from the start once live") { store in
            goLive(harness.transport)
            return presence.calls.count == 2 && plans.withLock { $0.count } == 2 && !store.isStale(.devicePresence)
                && !store.isStale(.plan)
        }
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let switching = Task { try await harness.notifier.switchTransport(to: graphQL, because: .failover("test")) }
        try await harness.flush(until: "the switch's window backfilled") { store in
            goLive(graphQL)
            return presence.calls.count == 3 && plans.withLock { $0.count } == 3 && !store.isStale(.devicePresence)
        }
        try await switching.boundedValue()
        let gap = try #require(
            events.values.compactMap { event -> GapWindow? in
                if case .transportSwitched(_, _, let gap, .failover) = event { gap } else { nil }
            }.first)
        #expect(gap.duration > 0)
        #expect(presence.calls.last == gap.start)
        #expect(plans.withLock { $0.last } == gap.start, "one window for every kind")
    }
}
