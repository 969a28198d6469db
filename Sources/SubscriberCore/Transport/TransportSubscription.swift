/// A transport's record of one subscription: what both protocols keep (its id and topic, the order it was asked in,
/// its consumer, the link that carries it and its liveness), and in `detail` what only its protocol keeps (AppSync's
/// rotation and refusal bookkeeping; nothing for GraphQL).
package struct TransportSubscription<Topic: Sendable, Detail>: SubscriptionRecord {
    package let id: String
    /// What it subscribes to: an AppSync channel or a GraphQL operation.
    package let topic: Topic
    /// The order it was asked in: subscribes go out in this order.
    package let sequence: Int
    package let sink: SubscriptionSink
    /// The link that carries it (its events count only from there); `nil` while it waits for one.
    package var link: Int?
    /// Whether it is confirmed on `link`.
    package var liveness = SubscriptionLiveness.pending
    package var detail: Detail

    /// Creates a record that no link carries yet.
    package init(id: String, topic: Topic, sequence: Int, sink: SubscriptionSink, detail: Detail) {
        self.id = id
        self.topic = topic
        self.sequence = sequence
        self.sink = sink
        self.detail = detail
    }
}
