import BackendNotifier

/// A backfill call that failed; it is retried with backoff, and its kind stays stale until one succeeds.
public struct BackfillFailure: Sendable, Equatable {
    /// The kind whose backfill failed.
    public let kind: VortexEventKind
    /// Failures in a row for this kind (1 for the first).
    public let attempt: Int
    /// The error, as text.
    public let message: String
}
