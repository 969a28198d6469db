import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import RealtimeStore

@Suite("RealtimeStore: restarted runs, switches, late registrations, identities and timeouts")
struct StoreRecoveryTests {
    // MARK: 1. A restarted run

    @Test("a run restarted before the previous one wound down takes over: the streams are read again")
    @MainActor
    func restartedRunTakesOver() async throws {
        let (harness, _, first, upstream) = try await StoreHarness.startedWithDevice()
        // A SwiftUI `.task` cancelled and restarted at once.
        first.cancel()
        let second = harness.startRun()
        defer { second.cancel() }
        // The new run's readers may find the upstream still running, or restart it: the event is sent (again, a
        // duplicate changes nothing) on whichever device subscription is active until the store has it.
        let transport = harness.transport
        let wentLive = Locked<Set<Int>>([upstream.index])
        try await harness.flush(until: "the live event after the restart") { store in
            if let active = transport.activeSubscriptions.last(where: { $0.request == .channel("vortex-app/user/u-1/device/*") }) {
                if wentLive.withLock({ $0.insert(active.index).inserted }) { active.send(.live) }
                active.send(json: StoreHarness.presenceJSON("t-5", online: true, at: 20))
            }
            return store.devices["t-5"] != nil && !store.isStale(.devicePresence)
        }
        #expect(harness.store.devices["t-1"] != nil)
    }

    @Test("a run that ends with no successor marks every kind stale: nothing keeps them current any more")
    @MainActor
    func endedRunMarksStale() async throws {
        let (harness, script, run, _) = try await StoreHarness.startedWithDevice()
        run.cancel()
        try await harness.flush(until: "stale once the run ended") { $0.isStale(.devicePresence) }
        await run.value
        #expect(harness.store.isStale(.devicePresence))
        // Run again: loaded afresh, current again.
        let loads = script.calls.count
        let again = harness.startRun()
        defer { again.cancel() }
        try await harness.flush(until: "loaded again") { _ in script.calls.count > loads }
        #expect(script.calls[loads] == .distantPast)
    }

    // MARK: 2. Switches

    /// A failover to a GraphQL transport; every subscription of it goes live as it appears.
    @MainActor
    static func failover(_ harness: StoreHarness, until what: String, _ done: @escaping @Sendable () -> Bool) async throws {
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let notifier = harness.notifier
        let switching = Task { try await notifier.switchTransport(to: graphQL, because: .failover("test")) }
        let live = Locked(Set<Int>())
        try await harness.flush(until: what) { _ in
            for subscription in graphQL.subscriptions where live.withLock({ $0.insert(subscription.index).inserted }) {
                subscription.send(.live)
            }
            return done()
        }
        try await switching.boundedValue()
    }

    @Test("a stream that first goes live inside a switch is backfilled from the load, not only from the switch's window")
    @MainActor
    func firstLiveInsideSwitch() async throws {
        let harness = StoreHarness()
        let script = BackfillScript()
        harness.store.backfill(.devicePresence, script.fetch)
        let run = harness.startRun()
        defer { run.cancel() }
        // The device stream subscribes but never goes live on the first transport.
        _ = try await harness.deviceUpstream()
        try await harness.flush(until: "the initial load") { _ in script.calls.count == 1 }
        try await harness.flush(until: "current after the load") { !$0.isStale(.devicePresence) }
        harness.clock.advance(by: .seconds(30))
        try await Self.failover(harness, until: "the switch's window backfilled") { script.calls.count == 2 }
        try await harness.flush(until: "current again") { !$0.isStale(.devicePresence) }
        // Events published between the load and the switch were never delivered: the window reaches back to the load.
        let since = try #require(script.calls.last)
        #expect(since <= StoreHarness.loadedAt)
    }

    @Test("a switch while the session is expired keeps the kinds stale: no stream runs, nothing is fetched")
    @MainActor
    func switchAfterExpiryStaysHeld() async throws {
        let (harness, script, run, upstream) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        let events = ValueRecorder(await harness.notifier.connectionEvents())
        let loads = script.calls.count
        upstream.finish(throwing: RealtimeError.sessionExpired("refused"))
        try await harness.flush(until: "stale after the expiry") { $0.isStale(.devicePresence) }
        harness.clock.advance(by: .seconds(5))
        try await Self.failover(harness, until: "switched") {
            events.values.contains { if case .transportSwitched = $0 { true } else { false } }
        }
        try await harness.idle()
        #expect(harness.store.isStale(.devicePresence))
        #expect(script.calls.count == loads, "no backfill while no stream runs")
    }

    // MARK: 3. A late registration

    @Test("a backfill registered after run() makes the call that was due: the kind is loaded and becomes current")
    @MainActor
    func lateRegistration() async throws {
        let (harness, _, run, _) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        #expect(harness.store.isStale(.plan))
        let plans = Locked<[Date]>([])
        harness.store.backfill(.plan) { since in
            plans.withLock { $0.append(since) }
            return [PlanStateOutput(eventType: "org/planChanged", timestamp: "2026-11-26T10:00:01Z")]
        }
        try await harness.flush(until: "the plan loaded") { store in
            !store.isStale(.plan) && store.organization.plan != nil
        }
        #expect(plans.withLock { $0.first } == .distantPast)
    }

    // MARK: 4. Signed out

    @Test("signed out, a restarted run fetches nothing")
    @MainActor
    func signedOutRestartFetchesNothing() async throws {
        let (harness, script, first, _) = try await StoreHarness.startedWithDevice()
        await harness.store.update(userId: nil, organizationId: nil)
        let loads = script.calls.count
        first.cancel()
        let second = harness.startRun()
        defer { second.cancel() }
        try await harness.idle()
        #expect(script.calls.count == loads, "no backfill without an identity")
        #expect(harness.store.isStale(.devicePresence))
    }

    /// Started as ``StoreHarness/startWithDevice(_:)`` over a parking transport (then, with a `gate`, the presence
    /// backfill replaced by it), an identity change to `userId` held in the notifier's `disconnect()`, and the run
    /// restarted meanwhile (a view's `.task`) and left to idle. Returns the new run, the change (release the
    /// disconnect, then await it) and how many calls `script` had before the change. Cancel the returned run.
    @MainActor
    static func restartDuringIdentityChange(
        _ harness: StoreHarness, to userId: String?, script: BackfillScript, gate: GatedBackfill? = nil
    ) async throws -> (run: Task<Void, Never>, updating: Task<Void, Never>, loads: Int) {
        let parking = try #require(harness.parking)
        let (first, _) = try await harness.startWithDevice(script)
        if let gate { harness.store.backfill(.devicePresence, gate.fetch) }
        let loads = script.calls.count
        parking.park(.disconnect)
        let store = harness.store
        let updating = Task { await store.update(userId: userId, organizationId: userId.map { _ in "o-2" }) }
        try await parking.waitUntilParked(.disconnect)
        first.cancel()
        let second = harness.startRun()
        try await harness.idle()
        return (second, updating, loads)
    }

    @Test("a run restarted during a sign-out fetches nothing, then or after it: every kind stays stale")
    @MainActor
    func restartDuringSignOutFetchesNothing() async throws {
        let harness = StoreHarness(parking: true)
        let script = BackfillScript()
        let (run, updating, loads) = try await Self.restartDuringIdentityChange(harness, to: nil, script: script)
        defer { run.cancel() }
        #expect(script.calls.count == loads, "no backfill while the identity changes")
        harness.parking?.release(.disconnect)
        try await updating.boundedValue()
        try await harness.idle()
        #expect(script.calls.count == loads, "no backfill without an identity")
        #expect(harness.store.isStale(.devicePresence))
    }

    @Test("a run restarted while another user signs in fetches only once the change ends; a void call's answer is dropped")
    @MainActor
    func restartDuringUserChangeFetchesForNewUser() async throws {
        let harness = StoreHarness(parking: true)
        let gate = GatedBackfill()
        let (run, updating, _) = try await Self.restartDuringIdentityChange(harness, to: "u-2", script: BackfillScript(), gate: gate)
        defer { run.cancel() }
        let early = gate.calls.count
        #expect(early == 0, "no backfill while the identity changes")
        harness.parking?.release(.disconnect)
        try await updating.boundedValue()
        try await gate.waitForCalls(early + 1, "the new user's load")
        #expect(gate.calls.last == .distantPast)
        gate.answerNewest(.success([StoreHarness.presence("t-2", online: true, at: 30)]))
        try await harness.flush(until: "the new user's device, current") { store in
            store.devices["t-2"] != nil && !store.isStale(.devicePresence)
        }
        // A call made during the change (for the previous user's API session) returns at last: it is void.
        gate.answer(.success([StoreHarness.presence("t-9", online: true, at: 40)]))
        try await harness.idle()
        #expect(Set(harness.store.devices.keys) == ["t-2"])
    }

    @Test("a store made over a notifier with no user fetches nothing until someone signs in through it, then loads")
    @MainActor
    func notifierWithoutUserFetchesNothing() async throws {
        let harness = StoreHarness(userId: nil)
        let script = BackfillScript()
        harness.store.backfill(.devicePresence, script.fetch)
        let run = harness.startRun()
        defer { run.cancel() }
        try await harness.idle()
        #expect(script.calls.isEmpty, "no backfill without an identity")
        #expect(harness.store.isStale(.devicePresence))
        await harness.store.update(userId: "u-1", organizationId: "o-1")
        try await waitUntil("the load from the start") { !script.calls.isEmpty }
        #expect(script.calls.first == .distantPast)
    }

    // MARK: 4b. A notifier shut down

    @Test("a notifier shut down under a running store ends what fed it: every kind goes stale")
    @MainActor
    func notifierShutdownMarksStale() async throws {
        let (harness, _, run, _) = try await StoreHarness.startedWithDevice()
        defer { run.cancel() }
        #expect(!harness.store.isStale(.devicePresence))
        await harness.notifier.shutdown()
        try await harness.flush(until: "stale once the notifier shut down") { $0.isStale(.devicePresence) }
        #expect(harness.store.isStale(.plan))
    }

    @Test("a run restarted after the notifier shut down fetches nothing: the kinds stay stale")
    @MainActor
    func restartAfterShutdownFetchesNothing() async throws {
        let (harness, script, first, _) = try await StoreHarness.startedWithDevice()
        await harness.notifier.shutdown()
        try await harness.flush(until: "stale once the notifier shut down") { $0.isStale(.devicePresence) }
        let loads = script.calls.count
        first.cancel()
        let second = harness.startRun()
        defer { second.cancel() }
        try await harness.idle()
        #expect(script.calls.count == loads, "nothing feeds the store: nothing is fetched")
        #expect(harness.store.isStale(.devicePresence))
    }

    // MARK: 5. Events without a timestamp

    @Test("two role changes without a timestamp are two values: an event that says no instant is never taken for a repeat")
    @MainActor
    func rolesWithoutTimestamp() async throws {
        // Legacy GraphQL role changes select only a nullable `reason`.
        let harness = StoreHarness(dialect: .graphQL)
        let reader = StoreValueReader(harness.store.values(.roleChanged))
        harness.store.backfill(.roleChanged) { _ in [] }
        let run = harness.startRun()
        defer { run.cancel() }
        let upstream = try await harness.transport.waitForSubscription(where: { request in
            if case .graphQL(let operation) = request.topic { "\(operation)".contains("subscribeRoleChange") } else { false }
        })
        upstream.send(.live)
        upstream.send(json: #"{"reason":null}"#)
        try await reader.wait(for: 1, "the first role change")
        upstream.send(json: #"{"reason":null}"#)
        try await reader.wait(for: 2, "the second role change")
        #expect(reader.values.count == 2)
    }

    // MARK: 7. Identity, policy

    @Test("a call of a signed-out identity that fails afterwards reports nothing")
    @MainActor
    func oldIdentityFailureNotReported() async throws {
        let harness = StoreHarness()
        // Recording from the start: no failure at all is reported, before the gap's call or after.
        let failures = ValueRecorder(harness.store.backfillFailures())
        let (run, gate, _) = try await harness.startWithHangingGapCall()
        defer { run.cancel() }
        await harness.store.update(userId: nil, organizationId: nil)
        gate.answer(.failure(BackfillScriptError()))
        try await harness.idle()
        #expect(failures.values.isEmpty)
        #expect(harness.store.lastBackfillFailure == nil)
        #expect(harness.store.statistics.backfillFailures == 0)
    }

    @Test("a zero delay is raised to the minimum: a failing backfill is never retried in a busy loop")
    func zeroDelayClamped() {
        let policy = BackfillPolicy(initialDelay: .zero, maximumDelay: .zero, callTimeout: .zero)
        #expect(policy.delay(beforeRetry: 1) == BackfillPolicy.minimumDelay)
        #expect(policy.delay(beforeRetry: 5) == BackfillPolicy.minimumDelay)
        #expect(policy.effectiveCallTimeout == BackfillPolicy.minimumDelay)
        #expect(BackfillPolicy(initialDelay: .zero).delay(beforeRetry: 2) == .milliseconds(200))
        #expect(BackfillPolicy.minimumDelay > .zero)
    }

    // MARK: 8. A call that hangs

    @Test("a call that hangs times out: the failure is reported and the call retried")
    @MainActor
    func hangingCallTimesOut() async throws {
        let harness = StoreHarness(backfillPolicy: BackfillPolicy(callTimeout: .seconds(3)))
        let (run, gate, calls) = try await harness.startWithHangingGapCall()
        defer { run.cancel() }
        gate.open()
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        harness.clock.advance(by: .seconds(4))
        try await harness.flush(until: "the timeout reported") { store in
            store.lastBackfillFailure?.message.hasPrefix("timed out") == true
        }
        try await harness.flush(until: "healed by the retry") { !$0.isStale(.devicePresence) }
        #expect(gate.calls.count == calls + 2)
        gate.answer(.success([]))  // the hung call returns at last: its answer is dropped
    }

    @Test("a run that ends while a call hangs (ignoring cancellation) ends all the same: the call is abandoned")
    @MainActor
    func runEndsDespiteHangingCall() async throws {
        let harness = StoreHarness()
        let (run, gate, _) = try await harness.startWithHangingGapCall()
        run.cancel()
        try await run.boundedValue()
        #expect(gate.waitingCount == 1, "the call still hangs")
        #expect(harness.store.isStale(.devicePresence))
        gate.answer(.success([]))  // the hung call returns at last: its answer is dropped
    }
}
