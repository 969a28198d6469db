import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import RealtimeStore

/// A notifier on a scripted transport and a store fed by it, both on one manual clock.
struct StoreHarness {
    let clock = ManualClock()
    let transport: ScriptedTransport
    let notifier: BackendNotifier
    let store: RealtimeStore

    @MainActor
    init(
        flushInterval: Duration = .milliseconds(16), backfillPolicy: BackfillPolicy = BackfillPolicy(),
        dialect: TransportDialect = .appSyncChannels
    ) {
        let clock = self.clock
        let transport = ScriptedTransport(dialect: dialect)
        self.transport = transport
        let wallClock = WallClock { Date(timeIntervalSince1970: 1_800_000_000 + Double(clock.now.offset.components.seconds)) }
        notifier = BackendNotifier(transport: transport, userId: "u-1", organizationId: "o-1", clock: clock, wallClock: wallClock)
        store = RealtimeStore(
            notifier: notifier, configuration: StoreConfiguration(flushInterval: flushInterval, backfillPolicy: backfillPolicy),
            clock: clock, wallClock: wallClock)
    }

    static func presence(_ thing: String, online: Bool, at second: Int) -> DevicePresenceOutput {
        DevicePresenceOutput(
            eventType: "device/presenceChanged", timestamp: "2026-11-26T10:00:\(String(format: "%02d", second))Z", orgId: "o-1",
            siteId: "g-1", thingName: thing, online: online)
    }

    static func presenceJSON(_ thing: String, online: Bool, at second: Int) -> String {
        #"{"eventType":"device/presenceChanged","timestamp":"2026-11-26T10:00:\#(String(format: "%02d", second))Z","orgId":"o-1","siteId":"g-1","thingName":"\#(thing)","online":\#(online)}"#
    }

    func deviceUpstream(for user: String = "u-1") async throws -> ScriptedTransport.Subscription {
        try await transport.waitForSubscription(where: { $0 == .channel("vortex-app/user/\(user)/device/*") })
    }

    /// Registers `script` as the presence backfill, starts the store, makes the device upstream live with `t-1` online
    /// (at 10 s), and waits until the store holds it and the initial load is done. Cancel the returned task.
    @MainActor
    func startWithDevice(_ script: BackfillScript) async throws -> (run: Task<Void, Never>, upstream: ScriptedTransport.Subscription) {
        store.backfill(.devicePresence, script.fetch)
        let store = store
        let run = Task { await store.run() }
        let upstream = try await deviceUpstream()
        upstream.send(.live)
        upstream.send(json: Self.presenceJSON("t-1", online: true, at: 10))
        try await flush(until: "t-1 and the initial load") { store in
            store.devices["t-1"] != nil && !store.isStale(.devicePresence)
        }
        return (run, upstream)
    }

    /// Advances the clock a flush interval at a time until `condition` holds on the main actor.
    func flush(until what: String, _ condition: @escaping @MainActor @Sendable (RealtimeStore) -> Bool) async throws {
        let store = store
        let clock = clock
        try await withTestTimeout(10, what) {
            while await !MainActor.run(body: { condition(store) }) {
                clock.advance(by: .milliseconds(16))
                try await TestTime.pollPause()
            }
        }
    }
}

/// What a backfill was asked for, and what it answers next.
final class BackfillScript: Sendable {
    private let state = Locked<(calls: [Date], answers: [Result<[DevicePresenceOutput], BackfillScriptError>])>(([], []))

    func answer(_ result: Result<[DevicePresenceOutput], BackfillScriptError>) { state.withLock { $0.answers.append(result) } }
    var calls: [Date] { state.withLock { $0.calls } }

    @Sendable func fetch(since: Date) async throws -> [DevicePresenceOutput] {
        let next = state.withLock { state -> Result<[DevicePresenceOutput], BackfillScriptError> in
            state.calls.append(since)
            return state.answers.isEmpty ? .success([]) : state.answers.removeFirst()
        }
        return try next.get()
    }
}

struct BackfillScriptError: Error, CustomStringConvertible {
    var description: String { "HTTP 503" }
}

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
        let run = Task { await harness.store.run() }
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
        #expect(script.calls == [.distantPast, Date(timeIntervalSince1970: 1_800_000_000)])
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
        let harness = StoreHarness()
        let script = BackfillScript()
        let (run, upstream) = try await harness.startWithDevice(script)
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
        let harness = StoreHarness()
        let script = BackfillScript()
        let (run, first) = try await harness.startWithDevice(script)
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
        let harness = StoreHarness()
        let script = BackfillScript()
        let (run, first) = try await harness.startWithDevice(script)
        defer { run.cancel() }
        let loads = script.calls.count
        await harness.store.update(userId: nil, organizationId: nil)
        #expect(harness.store.devices.isEmpty)
        #expect(harness.store.isStale(.devicePresence))
        // Nothing of the signed-out identity is applied, and nothing is fetched while nobody is signed in.
        first.send(json: StoreHarness.presenceJSON("t-1", online: false, at: 20))
        for _ in 0..<20 {
            harness.clock.advance(by: .milliseconds(16))
            try await TestTime.pollPause()
        }
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
        let harness = StoreHarness()
        let script = BackfillScript()
        harness.store.backfill(.devicePresence, script.fetch)
        let run = Task { await harness.store.run() }
        defer { run.cancel() }
        let first = try await harness.deviceUpstream()
        first.send(.live)
        try await harness.flush(until: "the initial load") { !$0.isStale(.devicePresence) }
        let loads = script.calls.count
        func wall() -> Date { Date(timeIntervalSince1970: 1_800_000_000 + Double(harness.clock.now.offset.components.seconds)) }
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
        let harness = StoreHarness()
        let script = BackfillScript()
        harness.store.backfill(.devicePresence, script.fetch)
        let run = Task { await harness.store.run() }
        defer { run.cancel() }
        let first = try await harness.deviceUpstream()
        first.send(.live)
        try await harness.flush(until: "the initial load") { !$0.isStale(.devicePresence) }
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
        let run = Task { await harness.store.run() }
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

/// Records every value of a stream as it arrives.
final class ValueRecorder<Value: Sendable>: Sendable {
    private let recorded = Locked<[Value]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Value>) {
        let recorded = recorded
        task = Task { for await value in stream { recorded.withLock { $0.append(value) } } }
    }

    var values: [Value] { recorded.withLock { $0 } }

    deinit { task.cancel() }
}
