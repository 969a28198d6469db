/// Counters of a ``BackendNotifier``, for diagnostics and tests (the same numbers go to swift-metrics).
public struct NotifierStatistics: Sendable, Equatable {
    /// Per public stream (`devicePresence`, `device`, `organization`, ...): values delivered to observers and values
    /// dropped because an observer's buffer was full.
    public var streams: [String: StreamStatistics]
    /// Payloads that could not be decoded (dropped and logged; the streams went on).
    public var decodeFailures: Int
    /// The transport in use.
    public var transport: String

    /// One stream's counters.
    public struct StreamStatistics: Sendable, Equatable {
        /// Deliveries (one per observer that received a value).
        public var delivered: Int
        /// Values dropped by full observer buffers.
        public var dropped: Int
    }
}
