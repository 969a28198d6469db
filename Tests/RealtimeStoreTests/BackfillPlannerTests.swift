import Foundation
import SubscriberCore
import Testing

@testable import RealtimeStore

@Suite("BackfillPlanner: state × event → actions")
struct BackfillPlannerTests {
    static func at(_ second: Double) -> Date { Date(timeIntervalSince1970: 1_000 + second) }
    static func window(_ start: Double, _ end: Double) -> GapWindow { GapWindow(start: at(start), end: at(end)) }

    /// A planner after `reset` at 0 and a successful first call: current, nothing in flight.
    static func current() -> BackfillPlanner {
        var planner = BackfillPlanner(policy: BackfillPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(4)))
        _ = planner.handle(.reset(now: at(0)))
        _ = planner.handle(.callSucceeded(id: 1, now: at(0)))
        return planner
    }

    @Test("reset: stale, and one call for everything (since distantPast); success makes the kind current")
    func reset() {
        var planner = BackfillPlanner(policy: BackfillPolicy())
        #expect(planner.handle(.reset(now: Self.at(0))) == [.stale(true), .call(id: 1, since: .distantPast)])
        #expect(planner.handle(.callSucceeded(id: 1, now: Self.at(1))) == [.stale(false)])
        #expect(!planner.isStale)
    }

    @Test("a window: stale and one call from its start; a window inside the running call's span is covered")
    func coveredWindow() {
        var planner = Self.current()
        #expect(planner.handle(.windowOpened(Self.window(10, 20))) == [.stale(true), .call(id: 2, since: Self.at(10))])
        // Reported late, but inside [10, 20]: the running call returns it.
        #expect(planner.handle(.windowOpened(Self.window(12, 18))) == [])
        #expect(planner.handle(.callSucceeded(id: 2, now: Self.at(21))) == [.stale(false)])
    }

    @Test("windows during a call merge into one next call, from the earliest instant the running call does not cover")
    func overlappingWindows() {
        var planner = Self.current()
        _ = planner.handle(.windowOpened(Self.window(10, 20)))
        #expect(planner.handle(.windowOpened(Self.window(15, 25))) == [])
        #expect(planner.handle(.windowOpened(Self.window(22, 30))) == [])
        #expect(planner.handle(.callSucceeded(id: 2, now: Self.at(31))) == [.call(id: 3, since: Self.at(20))])
        #expect(planner.isStale)
        #expect(planner.handle(.callSucceeded(id: 3, now: Self.at(32))) == [.stale(false)])
    }

    @Test("interrupted: stale, and no call (not even one due) until a window is reported, which reaches back to the interruption")
    func interruptedHoldsCalls() {
        var planner = Self.current()
        _ = planner.handle(.windowOpened(Self.window(10, 20)))
        #expect(planner.handle(.interrupted(since: Self.at(21))) == [])
        #expect(planner.handle(.callSucceeded(id: 2, now: Self.at(22))) == [], "what is missing since 21 waits for its window")
        #expect(planner.isStale)
        #expect(planner.handle(.windowOpened(Self.window(30, 40))) == [.call(id: 3, since: Self.at(21))])
        #expect(planner.handle(.callSucceeded(id: 3, now: Self.at(41))) == [.stale(false)])
    }

    @Test("a reset after an interruption calls at once: a new identity is not held by the old one's interruption")
    func resetAfterInterruption() {
        var planner = Self.current()
        #expect(planner.handle(.interrupted(since: Self.at(5))) == [.stale(true)])
        #expect(planner.handle(.reset(now: Self.at(6))) == [.call(id: 2, since: .distantPast)])
    }

    @Test("a retry of a call voided by a reset is ignored when it comes due; the current retry still runs")
    func staleRetry() {
        var planner = Self.current()
        _ = planner.handle(.windowOpened(Self.window(10, 20)))
        _ = planner.handle(.callFailed(id: 2, error: "503"))
        _ = planner.handle(.reset(now: Self.at(21)))
        _ = planner.handle(.callFailed(id: 3, error: "503"))
        #expect(planner.handle(.retryDue(id: 2, now: Self.at(22))) == [], "the voided call's retry")
        #expect(planner.handle(.retryDue(id: 3, now: Self.at(23))) == [.call(id: 4, since: .distantPast)])
    }

    @Test("a failed call is reported and retried with doubling delays up to the maximum; the window stays open")
    func failureAndRetry() {
        var planner = Self.current()
        _ = planner.handle(.windowOpened(Self.window(10, 20)))
        #expect(
            planner.handle(.callFailed(id: 2, error: "503")) == [
                .reportFailure(attempt: 1, error: "503"), .scheduleRetry(id: 2, after: .seconds(1)),
            ])
        // A window reported while waiting merges into the retry.
        #expect(planner.handle(.windowOpened(Self.window(5, 21))) == [])
        #expect(planner.handle(.retryDue(id: 2, now: Self.at(22))) == [.call(id: 3, since: Self.at(5))])
        #expect(
            planner.handle(.callFailed(id: 3, error: "503")) == [
                .reportFailure(attempt: 2, error: "503"), .scheduleRetry(id: 3, after: .seconds(2)),
            ])
        _ = planner.handle(.retryDue(id: 3, now: Self.at(25)))
        _ = planner.handle(.callFailed(id: 4, error: "503"))
        _ = planner.handle(.retryDue(id: 4, now: Self.at(30)))
        #expect(
            planner.handle(.callFailed(id: 5, error: "503")) == [
                .reportFailure(attempt: 4, error: "503"), .scheduleRetry(id: 5, after: .seconds(4)),
            ])
        #expect(planner.isStale)
        _ = planner.handle(.retryDue(id: 5, now: Self.at(40)))
        #expect(planner.handle(.callSucceeded(id: 6, now: Self.at(41))) == [.stale(false)])
    }

    @Test("an interruption (expired session, sign-out) is stale at once but calls nothing until a window reopens it")
    func interruption() {
        var planner = Self.current()
        #expect(planner.handle(.interrupted(since: Self.at(10))) == [.stale(true)])
        #expect(planner.handle(.windowOpened(Self.window(40, 50))) == [.call(id: 2, since: Self.at(10))])
    }

    @Test("reports about calls a reset made void, and stale retries, do nothing; the void call is no longer the one in flight")
    func staleReports() {
        var planner = Self.current()
        _ = planner.handle(.windowOpened(Self.window(10, 20)))
        #expect(planner.isCalling(2))
        #expect(planner.handle(.reset(now: Self.at(30))) == [.call(id: 3, since: .distantPast)])
        // The void call's answer is not applied (the feed asks before it applies one); the new call's is.
        #expect(!planner.isCalling(2))
        #expect(planner.isCalling(3))
        #expect(planner.handle(.callSucceeded(id: 2, now: Self.at(31))) == [])
        #expect(planner.handle(.callFailed(id: 2, error: "late")) == [])
        #expect(planner.handle(.retryDue(id: 2, now: Self.at(32))) == [])
        #expect(planner.isStale)
    }

    @Test("a window that does not release an interruption only widens what is missing: calls wait for the stream's own window")
    func windowWithoutRelease() {
        var planner = Self.current()
        _ = planner.handle(.interrupted(since: Self.at(10)))
        #expect(planner.handle(.windowOpened(Self.window(5, 20), releasing: false)) == [])
        #expect(planner.isStale)
        #expect(planner.handle(.windowOpened(Self.window(30, 40))) == [.call(id: 2, since: Self.at(5))])
    }

    @Test("a call that was not made (no backfill) leaves its window missing; a registration makes it")
    func skippedCallThenRegistered() {
        var planner = BackfillPlanner(policy: BackfillPolicy())
        #expect(planner.handle(.reset(now: Self.at(0))) == [.stale(true), .call(id: 1, since: .distantPast)])
        #expect(planner.handle(.callSkipped(id: 1)) == [])
        #expect(planner.handle(.windowOpened(Self.window(10, 20))) == [.call(id: 2, since: .distantPast)])
        #expect(planner.handle(.callSkipped(id: 2)) == [])
        #expect(planner.handle(.fetchRegistered(now: Self.at(30))) == [.call(id: 3, since: .distantPast)])
        #expect(planner.handle(.callSucceeded(id: 3, now: Self.at(31))) == [.stale(false)])
        // Nothing due: a registration calls nothing.
        #expect(planner.handle(.fetchRegistered(now: Self.at(40))) == [])
    }
}
