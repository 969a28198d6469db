import Foundation

/// A transport's record of one subscription, as far as both protocols agree: its consumer, and whether it is live on
/// the link that carries it. The liveness rules (when `live` and `resumed(gap:)` are reported, where a gap starts)
/// are written once, here.
package protocol SubscriptionRecord {
    /// Where its events go.
    var sink: SubscriptionSink { get }
    /// Whether it is confirmed on the link that carries it, and what its next confirmation reports.
    var liveness: SubscriptionLiveness { get set }
}

/// Whether a subscription is confirmed on the link that carries it, and what its next confirmation reports.
package enum SubscriptionLiveness: Equatable, Sendable {
    /// Never confirmed: the first confirmation reports `live`.
    case pending
    /// Confirmed on the link that carries it.
    case live
    /// The link that carried it was lost at `since` (its last frame, minus the safety margin) after it had been live:
    /// the next confirmation reports `resumed(gap:)` from then.
    case interrupted(since: Date)
}

extension SubscriptionRecord {
    /// Confirmed on the link that carries it.
    package var isLive: Bool { liveness == .live }

    /// Marks it live at `now`: `.live` the first time, `.resumed(gap:)` after an interruption, nothing otherwise.
    package mutating func confirm(now: Date) -> SessionEffect? {
        switch liveness {
        case .live:
            return nil
        case .pending:
            liveness = .live
            return .yield(sink, .live)
        case .interrupted(let start):
            liveness = .live
            return .yield(sink, .resumed(gap: GapWindow(start: start, end: now)))
        }
    }

    /// The link that carried it was lost at `lostAt`: it stops being live, and a gap opens if it ever was (the earliest
    /// loss wins when links are lost one after another before it is live again).
    package mutating func interrupt(at lostAt: Date) {
        switch liveness {
        case .pending: break
        case .live: liveness = .interrupted(since: lostAt)
        case .interrupted(let since): liveness = .interrupted(since: min(since, lostAt))
        }
    }
}
