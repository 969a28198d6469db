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
    /// Confirmed on `sentOn`: a `next` arrived, or the confirmation window passed without an `error`.
    var isLive = false
    /// Whether it has ever been live (then a later confirmation reports `resumed`).
    var everLive = false
    /// When it stopped being live: the last frame of the lost link, minus the safety margin.
    var interruptedAt: Date?
}
