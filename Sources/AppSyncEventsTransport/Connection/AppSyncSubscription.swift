import Foundation
import SubscriberCore

/// The transport's record of one subscription (inside ``AppSyncState``): its channel, and `link` the link whose `data`
/// for its id reaches the consumer.
typealias AppSyncSubscription = TransportSubscription<String, AppSyncSubscriptionDetail>

extension AppSyncSubscription {
    /// The channel it subscribes to.
    var channel: String { topic }
}

/// What AppSync alone keeps about a subscription: its refusals and its part in a rotation.
struct AppSyncSubscriptionDetail {
    /// Refused as unauthorized since it was last live (0 or 1): the retry is sent with refreshed credentials, and a
    /// second refusal fails the subscription.
    var authRefusals = 0
    /// Links replaced since it was last live because the session threw for its credentials: past
    /// `ReconnectBookkeeping.credentialsRetries`, the next throw ends it.
    var credentialsThrows = 0

    // Rotation: the replacement link, whether the subscription is confirmed there, and what it received there before
    // the cut-over.
    var rotationTarget: Int?
    /// When it was confirmed on `rotationTarget`: should the old link die before the cut-over, what it carried after
    /// its last frame and before this instant is lost.
    var rotationConfirmedAt: Date?
    var rotationBuffer: [RealtimePayload] = []
    /// The old link delivered to it after that confirmation: alive then, so nothing fell between the two links.
    var oldDeliveredSinceConfirmation = false
    /// What the old link delivered during the rotation. The new link carries copies of some of these, possibly even
    /// after the cut-over (the two sockets are not ordered with each other), so they are dropped when they show up
    /// there, until the grace period after the cut-over ends.
    var overlapLog: [Data] = []

    var rotationLive: Bool { rotationConfirmedAt != nil }

    mutating func clearRotation() {
        rotationTarget = nil
        rotationConfirmedAt = nil
        rotationBuffer = []
        oldDeliveredSinceConfirmation = false
    }

    /// Removes one copy of `json` from the overlap log; `true` if it was there (so the payload is a duplicate).
    mutating func consumeOverlap(_ json: Data) -> Bool {
        guard !overlapLog.isEmpty, let index = overlapLog.firstIndex(of: json) else { return false }
        overlapLog.remove(at: index)
        return true
    }
}

/// A WebSocket publish waiting to be sent and answered.
struct AppSyncPendingPublish {
    let channel: String
    let events: [String]
    /// Sends publishes in the order they were asked for.
    let sequence: Int
    /// The link whose writer is fetching credentials for it; `nil` otherwise.
    var claimedBy: Int?
    /// The link it was sent on; `nil` while waiting for an acknowledged link (or for credentials).
    var sentOn: Int?
    /// Refused as unauthorized so far (0 or 1): the retry is sent with refreshed credentials; a second refusal is final.
    var authRefusals = 0
    let reply: OneShotSignal<Result<PublishResult, RealtimeError>>
}

/// A connection rotation in progress.
struct AppSyncRotation {
    let from: Int
    /// When it began: the last instant the old link is known to have delivered, should it not answer its unsubscribes
    /// before the deadline (it may have gone silent since).
    let began: Date
    var to: Int?
    var awaitingUnsubscribe: Set<String>?
}

/// One link of the transport, as its state sees it.
///
/// It holds no credentials: every subscribe and publish is authorized with credentials asked for when it is sent.
struct AppSyncLinkRecord {
    var control: LinkControl?
    /// Subscribe messages sent on this link.
    var subscribed: Set<String> = []
    /// Unsubscribes to send on this link.
    var unsubscribeQueue: [String] = []
    /// Opened as a rotation's successor, not as the supervisor's primary: if the rotation is given up before it opens,
    /// it is closed then rather than made primary (the supervisor, reconnecting, opens a primary of its own).
    var successor = false
    /// A rotation's old link after the cut-over: it carries nothing more, and stays open only until the publishes sent
    /// on it are answered (their replies can come on no other link).
    var retired = false
}
