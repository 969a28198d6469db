/// A transport whose subscriptions can be read a batch at a time: both of this package's transports. The notifier's
/// pumps read them so, and wake their own observers once per batch; any other ``RealtimeTransport`` is read one event
/// at a time, each event a batch of its own.
package protocol BatchSubscribing: RealtimeTransport {
    /// ``RealtimeTransport/subscribe(_:)``, read through a ``BatchReader``: each read takes every event queued.
    func subscribeInBatches(_ request: SubscriptionRequest) async -> BatchReader<SubscriptionEvent>
}

extension BatchReader where Element == SubscriptionEvent {
    /// A subscription that ends at once with `error` (an invalid request).
    package static func failed(_ error: RealtimeError) -> BatchReader<SubscriptionEvent> {
        let buffer = StreamBuffer<SubscriptionEvent>(limit: 1)
        buffer.finish(throwing: error)
        return buffer.makeReader()
    }
}
