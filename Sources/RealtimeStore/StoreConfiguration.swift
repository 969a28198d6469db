/// How the store delivers to the main actor and retries backfills.
public struct StoreConfiguration: Sendable, Equatable {
    /// At most one hop to the main actor per interval; the changes inside it arrive as one batch (newest value per
    /// entity). Default: one display frame (16 ms). `.zero`: no waiting, each change is flushed as soon as the main
    /// actor takes it.
    public var flushInterval: Duration
    /// How failed backfills are retried.
    public var backfillPolicy: BackfillPolicy
    /// How many values a reader of ``RealtimeStore/values(_:)`` may fall behind by before its stream ends with
    /// ``RealtimeStoreError/readerFellBehind(kind:limit:)``. Default 1,000; at least 1.
    public var valueBufferLimit: Int

    /// Creates a configuration.
    public init(
        flushInterval: Duration = .milliseconds(16), backfillPolicy: BackfillPolicy = BackfillPolicy(), valueBufferLimit: Int = 1_000
    ) {
        self.flushInterval = flushInterval
        self.backfillPolicy = backfillPolicy
        self.valueBufferLimit = max(1, valueBufferLimit)
    }
}
