import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore

@testable import RealtimeStore

/// A notifier on a scripted transport and a store fed by it, both on one manual clock.
struct StoreHarness {
    /// The wall-clock instant at the manual clock's start.
    static let loadedAt = Date(timeIntervalSince1970: 1_800_000_000)

    let clock = ManualClock()
    let transport: ScriptedTransport
    /// The parking transport around ``transport``, when the harness was made with `parking` (to hold the notifier's
    /// `disconnect()` while an identity change is under way).
    let parking: ParkingTransport?
    let notifier: BackendNotifier
    let store: RealtimeStore

    @MainActor
    init(
        flushInterval: Duration = .milliseconds(16), backfillPolicy: BackfillPolicy = BackfillPolicy(), valueBufferLimit: Int = 1_000,
        dialect: TransportDialect = .appSyncChannels, userId: String? = "u-1", parking: Bool = false
    ) {
        let clock = self.clock
        let parking = parking ? ParkingTransport(dialect: dialect) : nil
        let transport = parking?.scripted ?? ScriptedTransport(dialect: dialect)
        self.transport = transport
        self.parking = parking
        let wallClock = WallClock { Self.loadedAt.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        notifier = BackendNotifier(
            transport: parking ?? transport, userId: userId, organizationId: userId.map { _ in "o-1" }, clock: clock, wallClock: wallClock)
        store = RealtimeStore(
            notifier: notifier,
            configuration: StoreConfiguration(
                flushInterval: flushInterval, backfillPolicy: backfillPolicy, valueBufferLimit: valueBufferLimit),
            clock: clock, wallClock: wallClock)
    }

    static func presence(_ thing: String, online: Bool, at second: Int) -> DevicePresenceOutput {
        DevicePresenceOutput(
            eventType: "device/presenceChanged", timestamp: "2026-11-26T10:00:\(String(format: "%02d", second))Z", orgId: "o-1",
            siteId: "g-1", thingName: thing, value: online)
    }

    static func presenceJSON(_ thing: String, online: Bool, at second: Int) -> String {
        #"{"eventType":"device/presenceChanged","timestamp":"2026-11-26T10:00:\#(String(format: "%02d", second))Z","orgId":"o-1","siteId":"g-1","thingName":"\#(thing)","online":\#(online)}"#
    }

    func deviceUpstream(for user: String = "u-1") async throws -> ScriptedTransport.Subscription {
        try await transport.waitForSubscription(where: { $0 == .channel("vortex-app/user/\(user)/device/*") })
    }

    /// Starts a run of the store. Cancel the returned task.
    func startRun() -> Task<Void, Never> {
        let store = store
        return Task { await store.run() }
    }

    /// Registers `script` as the presence backfill, starts the store, makes the device upstream live with `t-1` online
    /// (at 10 s), and waits until the store holds it and the initial load is done. Cancel the returned task.
    @MainActor
    func startWithDevice(_ script: BackfillScript) async throws -> (run: Task<Void, Never>, upstream: ScriptedTransport.Subscription) {
        store.backfill(.devicePresence, script.fetch)
        let run = startRun()
        let upstream = try await deviceUpstream()
        upstream.send(.live)
        upstream.send(json: Self.presenceJSON("t-1", online: true, at: 10))
        try await flush(until: "t-1 and the initial load") { store in
            store.devices["t-1"] != nil && !store.isStale(.devicePresence)
        }
        return (run, upstream)
    }

    /// A new harness, started as ``startWithDevice(_:)`` leaves it with a fresh script. Cancel the returned run.
    @MainActor
    static func startedWithDevice(
        backfillPolicy: BackfillPolicy = BackfillPolicy()
    ) async throws -> (harness: StoreHarness, script: BackfillScript, run: Task<Void, Never>, upstream: ScriptedTransport.Subscription) {
        let harness = StoreHarness(backfillPolicy: backfillPolicy)
        let script = BackfillScript()
        let (run, upstream) = try await harness.startWithDevice(script)
        return (harness, script, run, upstream)
    }

    /// Started as ``startWithDevice(_:)``, then the presence backfill replaced by a gated one (which answers at once
    /// while it is registered), and a 5 s gap opened whose call hangs until the test answers it. Returns the gate and
    /// how many calls it had before the gap's. Cancel the returned run.
    @MainActor
    func startWithHangingGapCall() async throws -> (run: Task<Void, Never>, gate: GatedBackfill, calls: Int) {
        let gate = GatedBackfill()
        gate.open()
        let (run, upstream) = try await startWithDevice(BackfillScript())
        store.backfill(.devicePresence, gate.fetch)
        gate.close()
        let calls = gate.calls.count
        upstream.send(.resumed(gap: GapWindow(start: Self.loadedAt, end: Self.loadedAt.addingTimeInterval(5))))
        try await gate.waitForCalls(calls + 1, "the gap's call")
        return (run, gate, calls)
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

    /// Advances the clock `steps` flush intervals (for "nothing happens" checks).
    func idle(steps: Int = 30) async throws {
        for _ in 0..<steps {
            clock.advance(by: .milliseconds(16))
            try await TestTime.pollPause()
        }
    }
}
