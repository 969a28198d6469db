import SubscriberCore

/// A clock that moves only when a test says so, so timers (ack wait, keep-alive, backoff, rotation) are tested
/// without sleeping.
public final class ManualClock: Clock, Sendable {
    /// An instant on a manual clock: the time advanced since it was created.
    public struct Instant: InstantProtocol, Sendable {
        /// The offset from the clock's start.
        public var offset: Duration
        /// Creates an instant.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` after this one.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other` (negative when `other` is earlier).
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: Int
        let deadline: Instant
        let duration: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Sleeper] = []
        var cancelled: Set<Int> = []
    }

    private let state = Locked(State())

    /// Creates a clock at offset zero.
    public init() {}

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Suspends until the clock has been advanced to `deadline`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(
                        Sleeper(id: id, deadline: deadline, duration: state.now.duration(to: deadline), continuation: continuation))
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                if let index = state.sleepers.firstIndex(where: { $0.id == id }) { return state.sleepers.remove(at: index) }
                state.cancelled.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward, waking every sleeper whose deadline has come, in deadline order.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// The number of tasks currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Waits (in real time) until some task sleeps on the clock for exactly `duration` from when it started sleeping:
    /// the way a test knows a particular timer (a 10 s backoff, a 15 s ack wait) is armed before advancing.
    public func waitForSleeper(sleeping duration: Duration, timeout: Double = scriptedWait) async throws {
        let start = ContinuousClock.now
        while !state.withLock({ $0.sleepers.contains { $0.duration == duration } }) {
            if ContinuousClock.now - start > .milliseconds(Int64(TestTime.scaled(timeout) * 1000)) {
                throw TestTimeoutError(what: "a sleeper of \(duration) on the manual clock")
            }
            try await TestTime.pollPause()
        }
    }

    /// Waits (in real time, briefly yielding) until at least `count` tasks sleep on the clock.
    /// - Throws: ``TestTimeoutError`` if that does not happen within `timeout` seconds.
    public func waitForSleepers(atLeast count: Int = 1, timeout: Double = scriptedWait) async throws {
        let start = ContinuousClock.now
        while sleeperCount < count {
            if ContinuousClock.now - start > .milliseconds(Int64(TestTime.scaled(timeout) * 1000)) {
                throw TestTimeoutError(what: "\(count) sleeper(s) on the manual clock (have \(sleeperCount))")
            }
            try await TestTime.pollPause()
        }
    }
}
