import Foundation

/// A transport's record of one subscription, as far as both protocols agree: its consumer, and whether it is live on
/// the link that carries it. The liveness rules (when `live` and `resumed(gap:)` are reported, where a gap starts)
/// are written once, here.
package protocol SubscriptionRecord {
    /// Where its events go.
    var sink: SubscriptionSink { get }
    /// Confirmed on the link that carries it.
    var isLive: Bool { get set }
    /// Whether it was ever live (then a later confirmation reports `resumed`).
    var everLive: Bool { get set }
    /// When it stopped being live: the last frame of the lost link, minus the safety margin.
    var interruptedAt: Date? { get set }
}

extension SubscriptionRecord {
    /// Marks it live at `now`: `.live` the first time, `.resumed(gap:)` after an interruption, nothing otherwise.
    package mutating func confirm(now: Date) -> SessionEffect? {
        guard !isLive else { return nil }
        isLive = true
        defer { everLive = true }
        if let start = interruptedAt {
            interruptedAt = nil
            return .yield(sink, .resumed(gap: GapWindow(start: start, end: now)))
        }
        return everLive ? nil : .yield(sink, .live)
    }

    /// The link that carried it was lost at `lostAt`: it stops being live, and a gap opens if it ever was (the earliest
    /// loss wins when links are lost one after another before it is live again).
    package mutating func interrupt(at lostAt: Date) {
        if everLive { interruptedAt = min(interruptedAt ?? lostAt, lostAt) }
        isLive = false
    }
}
