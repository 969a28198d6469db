/// Something a ``DeliveryBatch`` wakes: a ``StreamBuffer`` whose consumer has elements to take.
@usableFromInline package protocol DeliverySignal: AnyObject, Sendable {
    /// Wakes the consumer if it waits and there is something for it.
    func signal()
}

/// The consumers a reader has queued elements for since it last suspended, woken together so that one read's worth
/// of frames wakes each consumer once instead of once per element.
///
/// A reader runs with a batch as ``current`` (a task-local, set by the link runner and the notifier's pumps);
/// producers such as ``SubscriptionSink/yield(_:)`` then queue the element at once (a consumer that is awake takes it
/// straight away) but leave waking a waiting consumer to the batch. ``flush()`` wakes them: after each socket read
/// (the link's reader), when the reader is about to wait for its upstream ``StreamBuffer`` (the notifier's pumps),
/// when ``holdLimit`` elements were queued, and when the reader ends. Only the wake-up is
/// deferred, so order and loss accounting are those of the queue, and nothing waits past the reader's next
/// suspension.
@usableFromInline package final class DeliveryBatch: Sendable {
    /// The batch of the reader running on this task, if any.
    @usableFromInline @TaskLocal package static var current: DeliveryBatch?

    /// Queued elements beyond which the batch is flushed at once: a reader that never suspends (a server faster than
    /// the client) still wakes its consumers in slices of this size.
    package static let holdLimit = 64

    private struct State {
        var signals: [any DeliverySignal] = []
        var held = 0
        var closed = false
        var flushedByUpstream = false
    }

    private let state = Locked(State())

    package init() {}

    /// Records that `signal` has one more element queued whose consumer is still to be woken. Returns `false` once
    /// the batch is closed: the caller wakes the consumer itself.
    @usableFromInline package func hold(_ signal: any DeliverySignal) -> Bool {
        let (accepted, full) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            // Consecutive elements mostly go to the same consumer; one listed twice is merely woken twice.
            if state.signals.last !== signal { state.signals.append(signal) }
            state.held += 1
            return (true, state.held >= Self.holdLimit)
        }
        if full { flush() }
        return accepted
    }

    /// Wakes every consumer that has elements queued since the last flush.
    @usableFromInline package func flush() {
        let signals = state.withLock { state -> [any DeliverySignal] in
            defer {
                state.signals.removeAll(keepingCapacity: true)
                state.held = 0
            }
            return state.signals
        }
        for signal in signals { signal.signal() }
    }

    /// Whether the reader's upstream is a ``StreamBuffer``, which flushes the batch whenever the reader is about to
    /// wait for it. A reader whose upstream is any other stream flushes after each element itself. Once `true`, it
    /// stays `true`.
    package var isFlushedByUpstream: Bool { state.withLock { $0.flushedByUpstream } }

    /// Called by ``StreamBuffer`` as its consumer asks for the next element.
    @usableFromInline func markFlushedByUpstream() {
        state.withLock { $0.flushedByUpstream = true }
    }

    /// Flushes and stops holding: later elements under this batch wake their consumers at once.
    package func close() {
        state.withLock { $0.closed = true }
        flush()
    }
}

extension DeliverySignal {
    /// Wakes the consumer now, or, on a reader with a ``DeliveryBatch``, when the batch is flushed.
    @inlinable
    package func signalOrHold() {
        if let batch = DeliveryBatch.current, batch.hold(self) { return }
        signal()
    }
}
