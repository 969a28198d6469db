import Foundation
import Logging

/// The producing end of one subscription stream, with a bounded buffer that never loses an event silently.
///
/// When a consumer falls behind and the buffer is full, the newest events are dropped (the buffered, older ones stay
/// in order) and counted; as soon as there is room again, the stream yields ``SubscriptionEvent/lost(_:)`` with the
/// count and the window, in the position where the events were lost. Other losses (an unreadable event, a server
/// delivery error) are reported the same way.
package final class SubscriptionSink: Sendable {
    private struct PendingLoss {
        var count: Int
        var first: Date
        var last: Date
        var reason: LossReport.Reason
    }

    private let buffer: StreamBuffer<SubscriptionEvent>
    private let pending = Locked<PendingLoss?>(nil)
    private let logger: Logger
    private let label: String
    private let wallClock: WallClock
    private let margin: TimeInterval

    /// Creates a sink and the stream the consumer reads.
    /// - Parameters:
    ///   - bufferLimit: events held for a slow consumer before the newest are dropped (and reported).
    ///   - label: names the subscription in logs (a channel or operation name, never credentials).
    ///   - logger: where losses are logged.
    ///   - wallClock: timestamps loss windows.
    ///   - margin: how far before the first loss a loss window starts (clock skew, delivery latency).
    package static func make(
        bufferLimit: Int, label: String, logger: Logger, wallClock: WallClock = .system, margin: Duration = .zero
    ) -> (reader: BatchReader<SubscriptionEvent>, sink: SubscriptionSink) {
        let buffer = StreamBuffer<SubscriptionEvent>(limit: bufferLimit)
        let sink = SubscriptionSink(buffer: buffer, logger: logger, label: label, wallClock: wallClock, margin: margin)
        // The loss goes in as soon as the consumer makes room, not with the next event: on a quiet stream that could be
        // hours, and a run stopped meanwhile would take the report with it. The consumer reads it on its next call.
        buffer.onRoom { [weak sink] in _ = sink?.flushLoss() }
        return (buffer.makeReader(), sink)
    }

    private init(
        buffer: StreamBuffer<SubscriptionEvent>, logger: Logger, label: String, wallClock: WallClock, margin: Duration
    ) {
        self.buffer = buffer
        self.logger = logger
        self.label = label
        self.wallClock = wallClock
        self.margin = margin.timeInterval
    }

    /// A sink dropped without ``finish(throwing:)`` (its transport or its state went away) ends its stream normally,
    /// after any loss it still held: a consumer never waits for a producer that is gone.
    deinit {
        finish()
    }

    /// Called once when the consumer stops iterating (cancelled or dropped the stream), not when the sink finishes it.
    package func onConsumerGone(_ handler: @escaping @Sendable () -> Void) {
        buffer.onConsumerGone(handler)
    }

    /// Delivers an event; returns `false` once the consumer has gone.
    ///
    /// Given the reader's `batch`, the event is queued at once but the consumer is woken when the batch flushes
    /// (after the socket read), once for all of the batch's events; without one, at once.
    @discardableResult
    package func yield(_ event: consuming SubscriptionEvent, into batch: DeliveryBatch? = nil) -> Bool {
        let delivered = deliver(event)
        buffer.signal(in: batch)
        return delivered
    }

    /// Reports events lost for another reason than a full buffer (unreadable, or the server's delivery error).
    package func reportLoss(count: Int, reason: LossReport.Reason) {
        recordLoss(count: count, reason: reason)
        _ = flushLoss()
        buffer.signal()
    }

    /// Ends the stream normally or with an error.
    package func finish(throwing error: (any Error)? = nil) {
        // The stream's last word on losses goes in even if the queue is full: nothing may be lost silently.
        _ = flushLoss(beyondLimit: true)
        buffer.finish(throwing: error)
    }

    private func deliver(_ event: consuming SubscriptionEvent) -> Bool {
        if pending.withLock({ $0 != nil }), !flushLoss() {
            recordLoss(count: 1, reason: .bufferOverflow)
            return true
        }
        switch buffer.enqueue(event) {
        case .enqueued:
            return true
        case .dropped:
            recordLoss(count: 1, reason: .bufferOverflow)
            return true
        case .terminated:
            return false
        }
    }

    private func recordLoss(count: Int, reason: LossReport.Reason) {
        let now = wallClock.now()
        let total = pending.withLock { pending -> Int in
            if var loss = pending {
                loss.count += count
                loss.last = now
                pending = loss
                return loss.count
            }
            pending = PendingLoss(count: count, first: now, last: now, reason: reason)
            return count
        }
        if total == count {
            logger.warning("subscription lost events", metadata: ["subscription": "\(label)", "reason": "\(reason.rawValue)"])
        }
    }

    /// Yields the pending loss report if there is room (or anyway, `beyondLimit`); `false` if the buffer is still full.
    ///
    /// The pending loss is taken out under the lock before it is reported: two threads flushing at once would otherwise
    /// both report it (a loss counted twice). A report that finds the buffer full goes back, ahead of what was recorded
    /// meanwhile.
    fileprivate func flushLoss(beyondLimit: Bool = false) -> Bool {
        guard let loss = pending.withLock({ $0.take() }) else { return true }
        let report = LossReport(
            count: loss.count, window: GapWindow(start: loss.first.addingTimeInterval(-margin), end: loss.last), reason: loss.reason)
        switch beyondLimit ? buffer.enqueueBeyondLimit(.lost(report)) : buffer.enqueue(.lost(report)) {
        case .enqueued, .terminated:
            return true
        case .dropped:
            pending.withLock { current in
                current =
                    current.map { later in
                        PendingLoss(count: loss.count + later.count, first: loss.first, last: later.last, reason: loss.reason)
                    } ?? loss
            }
            return false
        }
    }
}
