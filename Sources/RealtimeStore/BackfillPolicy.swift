/// How a failed backfill is retried: after `initialDelay`, doubling up to `maximumDelay`, for as long as its window is
/// open (a window is never given up: what may be missing stays marked stale until a backfill succeeds). A call that
/// has not returned after `callTimeout` counts as failed ("timed out"), and is retried the same way.
public struct BackfillPolicy: Sendable, Equatable {
    /// The shortest delay between two attempts: a smaller (or zero) delay is raised to it, so a backfill that fails at
    /// once is never retried in a busy loop.
    public static let minimumDelay: Duration = .milliseconds(100)

    /// The delay before the first retry (at least ``minimumDelay``).
    public var initialDelay: Duration
    /// The longest delay between two attempts (at least ``minimumDelay``).
    public var maximumDelay: Duration
    /// How long a call may run before it counts as failed with "timed out" (it is retried; the call itself is cancelled).
    /// At least ``minimumDelay``.
    public var callTimeout: Duration

    /// Creates a policy (defaults: 1 s, doubling up to 60 s; a call times out after 60 s).
    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60), callTimeout: Duration = .seconds(60)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.callTimeout = callTimeout
    }

    /// The delay before retry number `attempt` (1 for the first retry), never under ``minimumDelay``.
    func delay(beforeRetry attempt: Int) -> Duration {
        let initial = max(initialDelay, Self.minimumDelay)
        let maximum = max(maximumDelay, Self.minimumDelay)
        var delay = initial
        for _ in 1..<max(attempt, 1) {
            delay *= 2
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }

    /// ``callTimeout``, never under ``minimumDelay``.
    var effectiveCallTimeout: Duration { max(callTimeout, Self.minimumDelay) }
}
