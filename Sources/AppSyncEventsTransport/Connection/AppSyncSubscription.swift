import Foundation
import SubscriberCore

/// The transport's record of one subscription (actor-confined).
struct AppSyncSubscription {
    let id: String
    let channel: String
    let sequence: Int
    let sink: SubscriptionSink
    /// The link whose `data` for this id reaches the consumer.
    var deliveringOn: Int?
    /// Confirmed on `deliveringOn`.
    var isLive = false
    /// When the subscription stopped being live; set until it is live again, then reported as the gap.
    var interruptedAt: Date?

    // Rotation: the replacement link, whether the subscription is confirmed there, and what it received there before
    // the cut-over.
    var rotationTarget: Int?
    var rotationLive = false
    var rotationBuffer: [RealtimePayload] = []
    /// What the old link delivered during the rotation. The new link carries copies of some of these, possibly even
    /// after the cut-over (the two sockets are not ordered with each other), so they are dropped when they show up
    /// there, until the grace period after the cut-over ends.
    var overlapLog: [Data] = []

    mutating func clearRotation() {
        rotationTarget = nil
        rotationLive = false
        rotationBuffer = []
    }

    /// Removes one copy of `json` from the overlap log; `true` if it was there (so the payload is a duplicate).
    mutating func consumeOverlap(_ json: Data) -> Bool {
        guard !overlapLog.isEmpty, let index = overlapLog.firstIndex(of: json) else { return false }
        overlapLog.remove(at: index)
        return true
    }
}

/// A WebSocket publish waiting for its reply.
struct AppSyncPendingPublish {
    let generation: Int
    var continuation: CheckedContinuation<PublishResult, any Error>?
    var outcome: Result<PublishResult, any Error>?
}

/// A connection rotation in progress.
struct AppSyncRotation {
    let from: Int
    var to: Int?
    var awaitingUnsubscribe: Set<String>?
    var deadline: Task<Void, Never>?
}
