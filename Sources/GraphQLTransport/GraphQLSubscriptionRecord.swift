import Foundation
import SubscriberCore

/// The transport's record of one subscription (inside ``GraphQLState``).
struct GraphQLSubscriptionRecord: SubscriptionRecord {
    let id: String
    let operation: GraphQLOperation
    let sequence: Int
    let sink: SubscriptionSink
    /// The link `subscribe` was sent on; `nil` while waiting for a connection.
    var sentOn: Int?
    /// Whether it is confirmed on `sentOn` (a `next` arrived, or the confirmation window passed without an `error`).
    var liveness = SubscriptionLiveness.pending
}
