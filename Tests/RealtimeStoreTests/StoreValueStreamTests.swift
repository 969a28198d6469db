import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import RealtimeStore

@Suite("RealtimeStore.values: live events and backfills in one stream, each value once")
struct StoreValueStreamTests {
    static func archive(_ thing: String, _ status: String, at second: Int) -> ArchiveStateOutput {
        ArchiveStateOutput(
            eventType: "archive/stateChanged", timestamp: "2026-11-26T10:00:\(String(format: "%02d", second))Z", orgId: "o-1",
            siteId: "g-1", thingName: thing, status: ArchiveStatus(rawValue: status))
    }

    static func archiveJSON(_ thing: String, _ status: String, at second: Int) -> String {
        #"{"eventType":"archive/stateChanged","timestamp":"2026-11-26T10:00:\#(String(format: "%02d", second))Z","orgId":"o-1","siteId":"g-1","thingName":"\#(thing)","status":"\#(status)"}"#
    }

    static func role(_ reason: String, at second: Int) -> RoleChangeOutput {
        RoleChangeOutput(eventType: "user/roleChanged", timestamp: "2026-11-26T10:00:\(String(format: "%02d", second))Z", reason: reason)
    }

    static func roleJSON(_ reason: String, at second: Int) -> String {
        #"{"eventType":"user/roleChanged","timestamp":"2026-11-26T10:00:\#(String(format: "%02d", second))Z","reason":"\#(reason)"}"#
    }

    @Test("state kinds: a value is delivered when it becomes its device's newest; an older or equal backfilled one is not")
    @MainActor
    func stateKindNewestOnly() async throws {
        let harness = StoreHarness()
        let reader = StoreValueReader(harness.store.values(.devicePresence))
        let script = BackfillScript()
        let (run, upstream) = try await harness.startWithDevice(script)
        defer { run.cancel() }
        try await reader.wait(for: 1, "t-1 live")
        // The gap's backfill returns t-1's live value again, an older one, a newer one, and another device.
        script.answer(
            .success([
                StoreHarness.presence("t-1", online: true, at: 10), StoreHarness.presence("t-1", online: false, at: 5),
                StoreHarness.presence("t-1", online: false, at: 20), StoreHarness.presence("t-2", online: true, at: 15),
            ]))
        let gap = GapWindow(start: Date(timeIntervalSince1970: 1_800_000_100), end: Date(timeIntervalSince1970: 1_800_000_160))
        upstream.send(.resumed(gap: gap))
        try await harness.flush(until: "the gap healed") { !$0.isStale(.devicePresence) && $0.devices["t-2"] != nil }
        // A live event racing the backfill: older than what the backfill delivered, it is not delivered.
        upstream.send(json: StoreHarness.presenceJSON("t-1", online: true, at: 18))
        upstream.send(json: StoreHarness.presenceJSON("t-1", online: true, at: 25))
        try await reader.wait(for: 4, "t-1 at 25 s")
        let delivered = reader.values.map { "\($0.payload.thingName ?? "")@\($0.payload.timestamp?.suffix(3) ?? "")/\($0.origin)" }
        #expect(delivered == ["t-1@10Z/live", "t-1@20Z/backfill", "t-2@15Z/backfill", "t-1@25Z/live"])
    }

    @Test("event kinds: each archive event once, live or backfilled, missed older ones included; a repeat is counted")
    @MainActor
    func archiveOnce() async throws {
        let harness = StoreHarness()
        let reader = StoreValueReader(harness.store.values(.archiveState))
        let calls = Locked<[Date]>([])
        let answers = Locked<[[ArchiveStateOutput]]>([
            [], [], [Self.archive("t-1", "Pending", at: 1), Self.archive("t-1", "Ready", at: 3)],
        ])
        harness.store.backfill(.archiveState) { since in
            calls.withLock { $0.append(since) }
            return answers.withLock { $0.isEmpty ? [] : $0.removeFirst() }
        }
        let run = harness.startRun()
        defer { run.cancel() }
        let upstream = try await harness.transport.waitForSubscription(where: {
            $0 == .channel("vortex-app/user/u-1/archive/stateChanged")
        })
        upstream.send(.live)
        try await harness.flush(until: "archives loaded") { _ in calls.withLock { $0.count } == 2 }
        try await harness.flush(until: "archives not stale") { !$0.isStale(.archiveState) }
        upstream.send(json: Self.archiveJSON("t-1", "Ready", at: 3))
        try await reader.wait(for: 1, "the live archive event")
        // A window: the backfill returns the event delivered live and one that was missed, older than it.
        upstream.send(
            .resumed(gap: GapWindow(start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_010))))
        try await reader.wait(for: 2, "the missed archive event")
        try await harness.flush(until: "the repeat counted") { store in
            return store.statistics.duplicates == 1 && !store.isStale(.archiveState)
        }
        #expect(reader.values.map { "\($0.payload.status?.rawValue ?? "")/\($0.origin)" } == ["Ready/live", "Pending/backfill"])
        // The store holds no archives: they are history.
        #expect(harness.store.statistics.applied == 0)
    }

    @Test("a missed role change older than the newest is delivered, though the store keeps the newest")
    @MainActor
    func roleHistory() async throws {
        let harness = StoreHarness()
        let reader = StoreValueReader(harness.store.values(.roleChanged))
        let answers = Locked<[[RoleChangeOutput]]>([[], [], [Self.role("demoted", at: 2), Self.role("promoted", at: 4)]])
        harness.store.backfill(.roleChanged) { _ in answers.withLock { $0.isEmpty ? [] : $0.removeFirst() } }
        let run = harness.startRun()
        defer { run.cancel() }
        let upstream = try await harness.transport.waitForSubscription(where: { $0 == .channel("vortex-app/user/u-1/roleChanged") })
        upstream.send(.live)
        try await harness.flush(until: "roles loaded") { !$0.isStale(.roleChanged) }
        upstream.send(json: Self.roleJSON("promoted", at: 4))
        try await reader.wait(for: 1, "the live role change")
        upstream.send(
            .resumed(gap: GapWindow(start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_010))))
        try await reader.wait(for: 2, "the missed role change")
        try await harness.flush(until: "healed") { !$0.isStale(.roleChanged) && $0.roleChange?.payload.reason == "promoted" }
        #expect(reader.values.map { "\($0.payload.reason ?? "")/\($0.origin)" } == ["promoted/live", "demoted/backfill"])
        #expect(harness.store.roleChange?.payload.reason == "promoted")
    }

    @Test("another identity's events are its own: one equal to an event the previous identity delivered is delivered")
    @MainActor
    func identityForgetsDelivered() async throws {
        let harness = StoreHarness()
        let reader = StoreValueReader(harness.store.values(.roleChanged))
        let run = harness.startRun()
        defer { run.cancel() }
        let first = try await harness.transport.waitForSubscription(where: { $0 == .channel("vortex-app/user/u-1/roleChanged") })
        first.send(.live)
        first.send(json: Self.roleJSON("promoted", at: 4))
        try await reader.wait(for: 1, "u-1's role change")
        await harness.store.update(userId: "u-2", organizationId: "o-1")
        let second = try await harness.transport.waitForSubscription(where: { $0 == .channel("vortex-app/user/u-2/roleChanged") })
        second.send(.live)
        second.send(json: Self.roleJSON("promoted", at: 4))
        try await reader.wait(for: 2, "u-2's role change, equal to u-1's")
        #expect(reader.values.map(\.origin) == [.live, .live])
    }

    @Test("archives without a registered backfill are never stale; with one, a window makes them stale until it is healed")
    @MainActor
    func archiveStaleOnlyWhenRegistered() async throws {
        let harness = StoreHarness()
        let run = harness.startRun()
        defer { run.cancel() }
        let upstream = try await harness.transport.waitForSubscription(where: {
            $0 == .channel("vortex-app/user/u-1/archive/stateChanged")
        })
        upstream.send(.live)
        upstream.send(
            .resumed(gap: GapWindow(start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_010))))
        try await harness.flush(until: "the plan stale, as every state kind without a backfill") { $0.isStale(.plan) }
        try await harness.idle(steps: 5)
        #expect(!harness.store.isStale(.archiveState))
        #expect(!harness.store.staleKinds.contains(.archiveState))
    }

    @Test("a reader that falls behind gets what it had queued, then the stream throws: nothing is dropped silently")
    @MainActor
    func fellBehind() async throws {
        let harness = StoreHarness(valueBufferLimit: 2)
        let stream = harness.store.values(.devicePresence)
        let run = harness.startRun()
        defer { run.cancel() }
        let upstream = try await harness.deviceUpstream()
        upstream.send(.live)
        // Nobody reads yet: the third value does not fit.
        for second in 1...3 { upstream.send(json: StoreHarness.presenceJSON("t-1", online: true, at: second)) }
        try await harness.flush(until: "three values taken") { $0.statistics.applied >= 3 }
        let seen = Locked<[String]>([])
        try await withTestTimeout(10, "the stream's end") {
            do {
                for try await value in stream { seen.withLock { $0.append(value.payload.timestamp ?? "") } }
                Issue.record("the stream ended without an error")
            } catch let error as RealtimeStoreError {
                #expect(error == .readerFellBehind(kind: .devicePresence, limit: 2))
            }
        }
        #expect(seen.withLock { $0 } == ["2026-11-26T10:00:01Z", "2026-11-26T10:00:02Z"])
    }

    @Test("a reader that leaves is forgotten at once, before any value of its kind arrives")
    @MainActor
    func leavingReaderForgotten() async throws {
        let harness = StoreHarness()
        let stream = harness.store.values(.plan)
        #expect(harness.store.feed.valueReaderCount == 1)
        let reading = Task { for try await _ in stream {} }
        reading.cancel()
        _ = await reading.result
        try await withTestTimeout(10, "the reader forgotten") {
            while await MainActor.run(body: { harness.store.feed.valueReaderCount }) != 0 { try await TestTime.pollPause() }
        }
    }

    @Test("delivered events are remembered per identity, oldest forgotten first")
    func deliveredEventsBounded() {
        var delivered = DeliveredEvents(limit: 2)
        let events = (1...3).compactMap { DeliveredEvents.Identity(.roleChanged(Self.role("r\($0)", at: $0))) }
        // The first is forgotten to make room for the third; the second is still remembered.
        let firsts = [0, 0, 1, 2, 1, 0].map { delivered.firstDelivery(events[$0]) }
        #expect(firsts == [true, false, true, true, false, true])
    }

    @Test("an event is identified by what it says: a decoded field filled from another, or a timestamp's spelling, is the same event")
    func identityByMeaning() {
        let live = ArchiveStateOutput(
            eventType: "archive/stateChanged", timestamp: "2026-11-26T10:00:03Z", orgId: "o-1", siteId: "g-1", thingName: "t-1",
            deviceGroupID: "g-1", status: .ready)
        let backfilled = ArchiveStateOutput(
            eventType: "archive/stateChanged", timestamp: "2026-11-26T10:00:03.000Z", orgId: "o-1", siteId: "g-1", thingName: "t-1",
            status: .ready)
        #expect(DeliveredEvents.Identity(.archiveState(live)) == DeliveredEvents.Identity(.archiveState(backfilled)))
        var other = backfilled
        other.status = .failed
        #expect(DeliveredEvents.Identity(.archiveState(live)) != DeliveredEvents.Identity(.archiveState(other)))
        #expect(DeliveredEvents.Identity(.plan(PlanStateOutput())) == nil)
    }
}
