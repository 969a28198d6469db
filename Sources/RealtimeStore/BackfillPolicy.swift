/// How a failed backfill is retried: after `initialDelay`, doubling up to `maximumDelay`, for as long as its window is
/// open (a window is never given up: what may be missing stays marked stale until a backfill succeeds).
public struct BackfillPolicy: Sendable, Equatable {
    /// The delay before the first retry.
    public var initialDelay: Duration
    /// The longest delay between two attempts.
    public var maximumDelay: Duration

    /// Creates a policy (defaults: 1 s, doubling up to 60 s).
    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The delay before retry number `attempt` (1 for the first retry).
    func delay(beforeRetry attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(attempt, 1) {
            delay *= 2
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }
}
