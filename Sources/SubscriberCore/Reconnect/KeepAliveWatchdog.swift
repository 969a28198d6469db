/// Declares a connection dead when nothing arrives for a whole `timeout`.
///
/// Receiving a message only bumps a counter (no timer work on the hot path). The watchdog wakes every quarter of the
/// timeout and fires after four consecutive quarters without activity, so silence is detected between 1x and 1.25x
/// the timeout. It runs on the injected clock, so tests drive it without sleeping.
public struct KeepAliveWatchdog: Sendable {
    /// The silence after which the connection counts as dead.
    public let timeout: Duration
    private let activity = Locked(UInt64(0))

    /// Creates a watchdog.
    public init(timeout: Duration) { self.timeout = timeout }

    /// Records that something arrived.
    public func recordActivity() {
        activity.withLock { $0 &+= 1 }
    }

    /// Returns when a full timeout passed in silence; throws `CancellationError` when cancelled.
    public func waitForSilence(clock: any Clock<Duration>) async throws {
        let quarter = timeout / 4
        var quietQuarters = 0
        var seen = activity.withLock { $0 }
        while quietQuarters < 4 {
            try await clock.sleep(for: quarter, tolerance: nil)
            let now = activity.withLock { $0 }
            if now == seen {
                quietQuarters += 1
            } else {
                quietQuarters = 0
                seen = now
            }
        }
    }
}
