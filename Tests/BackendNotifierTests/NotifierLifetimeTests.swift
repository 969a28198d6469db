import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 21 item 5: a notifier that is shut down, or dropped, releases everything — itself, its hubs, its transport
/// and every observer's buffer — and every observer's `for await` ends (a consumer waiting on a stream nobody can
/// finish any more would wait for ever, holding its buffer: what LeakSanitizer reported).
@Suite("BackendNotifier lifetime", .timeLimit(.minutes(2)))
struct NotifierLifetimeTests {
    /// What a session leaves behind if it leaks: weak references to check, and the consumers' tasks to wait for.
    struct Session {
        let notifier: WeakReference<BackendNotifier>
        let transport: WeakReference<ScriptedTransport>
        let hubs: [WeakReference<AnyObject>]
        let buffers: [WeakReference<AnyObject>]
        let consumers: [Task<Int, Never>]
        /// Fired by each consumer when its loop ends.
        let ends: [OneShotSignal<Void>]

        /// Waits (for explicit conditions: every consumer's loop ended, every reference released).
        func expectReleased() async throws {
            do {
                try await withTestTimeout(5, "every observer's loop to end") { [ends] in
                    for end in ends { _ = await end.wait() }
                }
            } catch {
                for consumer in consumers { consumer.cancel() }  // so that the test does not hang
                throw error
            }
            try await withTestTimeout(5, "everything to be released") { [self] in
                while !(notifier.isReleased && transport.isReleased && (hubs + buffers).allSatisfy(\.isReleased)) {
                    try await TestTime.pollPause()
                }
            }
        }
    }

    /// Reads `stream` to its end and returns how many values it had; `first` fires at the first value, `end` when
    /// the loop has ended.
    static func consume<Value: Sendable>(
        _ stream: AsyncStream<Value>, end: OneShotSignal<Void>, first: OneShotSignal<Void>? = nil
    ) -> Task<Int, Never> {
        Task {
            var count = 0
            for await _ in stream {
                count += 1
                first?.fire()
            }
            end.fire()
            return count
        }
    }

    /// A signed-in session with observers on several streams, an upstream delivering, a switch timer's clock.
    static func session(shutDown: Bool) async throws -> Session {
        let clock = ManualClock()
        var transport: ScriptedTransport? = ScriptedTransport(dialect: .appSyncChannels)
        var notifier: BackendNotifier? = BackendNotifier(
            transport: transport!, userId: "u-1", organizationId: "o-1", clock: clock)
        let roles = await notifier!.roleValues()
        let firstRole = OneShotSignal<Void>()
        let ends = (0..<5).map { _ in OneShotSignal<Void>() }
        let consumers = [
            consume(roles, end: ends[0], first: firstRole), consume(await notifier!.devicePresenceValues(), end: ends[1]),
            consume(await notifier!.deviceValues(), end: ends[2]), consume(await notifier!.connectionEvents(), end: ends[3]),
            consume(await notifier!.connectionStates(), end: ends[4]),
        ]
        let role = try await transport!.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        _ = try await transport!.waitForSubscription(where: NotifierHarness.channel("device/*"))
        role.send(.live)
        role.send(json: NotifierRecoveryTests.role)
        try await withTestTimeout(5, "the role to be delivered") { _ = await firstRole.wait() }
        await notifier!.enterBackground()  // a timer armed on the clock
        let hubs = await notifier!.hubs
        let session = Session(
            notifier: WeakReference(notifier!), transport: WeakReference(transport!),
            hubs: [hubs.role, hubs.presence, hubs.deviceMerged, hubs.archive].map { WeakReference($0 as AnyObject) }
                + [WeakReference(await notifier!.events as AnyObject)],
            buffers: hubs.role.observerBuffers.map { WeakReference($0 as AnyObject) }
                + hubs.presence.observerBuffers.map { WeakReference($0 as AnyObject) }
                + hubs.deviceMerged.observerBuffers.map { WeakReference($0 as AnyObject) },
            consumers: consumers, ends: ends)
        #expect(session.buffers.count == 3)
        if shutDown { await notifier!.shutdown() }
        notifier = nil
        transport = nil
        return session
    }

    @Test("shut down: every observer's stream ends and the notifier, its hubs, transport and buffers are released")
    func shutDownReleasesEverything() async throws {
        let session = try await Self.session(shutDown: true)
        try await session.expectReleased()
        #expect(await session.consumers[0].value == 1, "the role delivered before the shutdown")
    }

    @Test("dropped without shutdown: the same")
    func droppedReleasesEverything() async throws {
        try await Self.session(shutDown: false).expectReleased()
    }

    @Test("after shutdown a new observer's stream ends at once and operations return")
    func afterShutdown() async throws {
        let harness = NotifierHarness()
        await harness.notifier.shutdown()
        var roles = await harness.notifier.roleValues().makeAsyncIterator()
        #expect(await roles.next() == nil)
        var states = await harness.notifier.connectionStates().makeAsyncIterator()
        #expect(await states.next() == .offline)
        #expect(await states.next() == nil)
        await harness.notifier.update(userId: "u-2", organizationId: "o-2")
        await harness.notifier.enterForeground()
        await #expect(throws: RealtimeError.disconnected) {
            try await harness.notifier.switchTransport(to: ScriptedTransport(dialect: .graphQL))
        }
        #expect(harness.transport.subscriptions.isEmpty)
    }

    @Test("observing and cancelling 10,000 times on a live notifier leaves no observer behind")
    func observeAndCancel() async throws {
        let harness = NotifierHarness()
        let probe = ValueProbe(await harness.notifier.roleValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        for _ in 0..<10_000 { _ = await harness.notifier.roleValues() }
        try await withTestTimeout(5, "the dropped observers to be gone") {
            while await harness.notifier.hubs.role.observerCount > 1 { try await TestTime.pollPause() }
        }
        #expect(!upstream.isCancelled)
        #expect(harness.transport.subscriptions.count == 1)
        _ = probe
    }
}
