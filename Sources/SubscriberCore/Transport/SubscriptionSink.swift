import Logging

/// The producing end of one subscription stream, with a bounded buffer.
///
/// A consumer that stops reading must not make the transport's memory grow without bound, and must not lose events
/// silently either: when the buffer is full the oldest events are dropped, each drop is counted and logged, and the
/// count is readable (``droppedCount``).
public struct SubscriptionSink: Sendable {
    /// The continuation the transport yields into.
    public let continuation: AsyncThrowingStream<SubscriptionEvent, any Error>.Continuation
    private let drops = Locked(0)
    private let logger: Logger
    private let label: String

    /// Creates a sink and the stream the consumer reads.
    /// - Parameters:
    ///   - bufferLimit: events held for a slow consumer before the oldest are dropped.
    ///   - label: names the subscription in logs (a channel or operation name, never credentials).
    ///   - logger: where drops are logged.
    public static func make(bufferLimit: Int, label: String, logger: Logger)
        -> (stream: AsyncThrowingStream<SubscriptionEvent, any Error>, sink: SubscriptionSink)
    {
        let (stream, continuation) = AsyncThrowingStream<SubscriptionEvent, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, bufferLimit)))
        return (stream, SubscriptionSink(continuation: continuation, logger: logger, label: label))
    }

    private init(continuation: AsyncThrowingStream<SubscriptionEvent, any Error>.Continuation, logger: Logger, label: String) {
        self.continuation = continuation
        self.logger = logger
        self.label = label
    }

    /// Delivers an event; returns `false` once the consumer has gone (the stream terminated).
    @discardableResult
    public func yield(_ event: SubscriptionEvent) -> Bool {
        switch continuation.yield(event) {
        case .enqueued: return true
        case .dropped:
            let total = drops.withLock { count in
                count += 1
                return count
            }
            logger.warning("subscription buffer full; dropped the oldest event", metadata: ["subscription": "\(label)", "dropped": "\(total)"])
            return true
        case .terminated: return false
        @unknown default: return true
        }
    }

    /// Events dropped so far because the consumer fell behind.
    public var droppedCount: Int { drops.withLock { $0 } }

    /// Ends the stream normally or with an error.
    public func finish(throwing error: (any Error)? = nil) {
        continuation.finish(throwing: error)
    }
}
