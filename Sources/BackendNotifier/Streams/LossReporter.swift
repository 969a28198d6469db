import Foundation
import Logging
import SubscriberCore

/// Reports events the notifier itself lost (a full observer buffer, a payload it could not decode, a server error in
/// a subscription) as ``NotifierConnectionEvent/eventsLost(stream:transport:loss:)``, with a window that starts
/// ``NotifierConfiguration/lossMargin`` before the lost events arrived (they were published a little before) and ends
/// now: before the loss was noticed for an event lost as it arrived, before it was queued for one held and then
/// dropped to make room (a full drop-oldest buffer, a switch's held events).
struct LossReporter: Sendable {
    let events: StreamHub<NotifierConnectionEvent>
    /// The active transport's name, readable from the delivery path without hopping onto the notifier.
    let activeName: Locked<String>
    let wallClock: WallClock
    let lossMargin: TimeInterval

    /// `count` events of `stream` lost now, on `transport` (the active one by default), that arrived at or after
    /// `since` (`nil`: now; a `since` after now counts as now).
    func report(_ reason: LossReport.Reason, count: Int = 1, stream: String, transport: String? = nil, since: Date? = nil) {
        let now = wallClock.now()
        let arrived = min(since ?? now, now)
        let loss = LossReport(count: count, window: GapWindow(start: arrived.addingTimeInterval(-lossMargin), end: now), reason: reason)
        events.yield(.eventsLost(stream: stream, transport: transport ?? activeName.withLock { $0 }, loss: loss))
    }

    /// What an observer's full buffer does: counts, logs and reports what it dropped, from when the oldest of it can
    /// have been queued (the observers' drop-oldest buffers time their consumers' takes with this reporter's clock).
    func bufferOverflow(metrics: NotifierMetrics, logger: Logger) -> ObserverDrops {
        ObserverDrops(wallClock: wallClock) { stream, count, queuedSince in
            metrics.bufferDrop(stream: stream, count: count)
            logger.warning("observer buffer full; dropped values", metadata: ["stream": "\(stream)", "count": "\(count)"])
            report(.bufferOverflow, count: count, stream: stream, since: queuedSince)
        }
    }
}
