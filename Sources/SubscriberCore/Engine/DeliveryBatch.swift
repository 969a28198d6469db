/// Events a link's reader yielded since it last suspended, held back so that one read's worth of frames wakes each
/// consumer once instead of once per event.
///
/// The reader runs with a batch as ``current`` (a task-local); ``SubscriptionSink/yield(_:)`` then queues the event
/// at once (a consumer that is awake takes it straight away) but leaves waking a waiting consumer to the batch.
/// ``flush()`` wakes them: when the reader suspends (see ``ReaderExecutor``), when ``holdLimit`` events were queued,
/// and when the reader ends. Only the wake-up is deferred, so order and loss accounting are those of the queue, and
/// no event waits past the reader's next suspension.
package final class DeliveryBatch: Sendable {
    /// The batch of the reader running on this task, if any.
    @TaskLocal package static var current: DeliveryBatch?

    /// Held events beyond which the batch is flushed at once: a reader that never suspends (a server faster than the
    /// client) still delivers in slices of this size.
    package static let holdLimit = 64

    private struct State {
        var sinks: [SubscriptionSink] = []
        var held = 0
        var closed = false
    }

    private let state = Locked(State())

    package init() {}

    /// Records that `sink` queued one more event whose consumer is still to be woken. Returns `false` once the batch
    /// is closed: the caller wakes the consumer itself.
    func hold(_ sink: SubscriptionSink) -> Bool {
        let (accepted, full) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            // Consecutive events mostly go to the same sink; a sink listed twice is merely signalled twice.
            if state.sinks.last !== sink { state.sinks.append(sink) }
            state.held += 1
            return (true, state.held >= Self.holdLimit)
        }
        if full { flush() }
        return accepted
    }

    /// Wakes every consumer that has events queued since the last flush.
    package func flush() {
        let sinks = state.withLock { state -> [SubscriptionSink] in
            defer {
                state.sinks.removeAll(keepingCapacity: true)
                state.held = 0
            }
            return state.sinks
        }
        for sink in sinks { sink.signal() }
    }

    /// Flushes and stops holding: later yields under this batch are delivered at once.
    package func close() {
        state.withLock { $0.closed = true }
        flush()
    }
}
