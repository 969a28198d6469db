/// What the store did with what it was fed, since it started.
public struct StoreStatistics: Sendable, Equatable {
    /// Events that changed a value (live or backfilled).
    public var applied = 0
    /// Applied events whose value was replaced by a newer one of the same entity before it reached the main actor.
    public var merged = 0
    /// Events dropped as older than the value held (an entity never goes backwards).
    public var older = 0
    /// Events equal to the value held, and archive events delivered before (a backfill returning them again).
    public var duplicates = 0
    /// Hops to the main actor (each carries one batch).
    public var flushes = 0
    /// Backfill calls that failed (each is retried).
    public var backfillFailures = 0

    /// No events yet.
    public init() {}
}
