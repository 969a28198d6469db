import Foundation
import Logging
import SubscriberCore

/// Reports events the notifier itself lost (a full observer buffer, a payload it could not decode, a server error in
/// a subscription) as ``NotifierConnectionEvent/eventsLost(stream:transport:loss:)``, with a window that starts
/// ``NotifierConfiguration/lossMargin`` before the loss was noticed (the events were published a little before).
struct LossReporter: Sendable {
    let events: StreamHub<NotifierConnectionEvent>
    /// The active transport's name, readable from the delivery path without hopping onto the notifier.
    let activeName: Locked<String>
    let wallClock: WallClock
    let lossMargin: TimeInterval

    /// `count` events of `stream` lost now, on `transport` (the active one by default).
    func report(_ reason: LossReport.Reason, count: Int = 1, stream: String, transport: String? = nil) {
        let now = wallClock.now()
        let loss = LossReport(count: count, window: GapWindow(start: now.addingTimeInterval(-lossMargin), end: now), reason: reason)
        events.yield(.eventsLost(stream: stream, transport: transport ?? activeName.withLock { $0 }, loss: loss))
    }

    /// What an observer's full buffer does: counts, logs and reports what it dropped.
    func bufferOverflow(metrics: NotifierMetrics, logger: Logger) -> @Sendable (String, Int) -> Void {
        { stream, count in
            metrics.bufferDrop(stream: stream, count: count)
            logger.warning("observer buffer full; dropped values", metadata: ["stream": "\(stream)", "count": "\(count)"])
            report(.bufferOverflow, count: count, stream: stream)
        }
    }
}
