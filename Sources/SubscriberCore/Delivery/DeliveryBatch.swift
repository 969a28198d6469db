/// Something a ``DeliveryBatch`` wakes: a ``StreamBuffer`` whose consumer has elements to take.
@usableFromInline package protocol DeliverySignal: AnyObject, Sendable {
    /// Wakes the consumer if it waits and there is something for it.
    func signal()
}

/// The consumers a reader has queued elements for since it last flushed, woken together so that one read's worth of
/// elements wakes each consumer once instead of once per element.
///
/// A batch is a value its reader owns and hands down explicitly: the link's reader passes its batch to
/// ``LinkDriver/handleFrame(_:into:)`` and flushes it after each socket read; a notifier pump passes its batch to the
/// event router and flushes it after each batch it read from its subscription (``BatchReader``). Producers
/// queue the element at once (a consumer that is awake takes it straight away) and leave waking a waiting consumer to
/// the batch (``DeliverySignal/signal(in:)``). The batch also flushes itself when ``holdLimit`` elements were
/// queued. Only the wake-up is deferred, so order and loss accounting are those of the queue.
@usableFromInline package final class DeliveryBatch: Sendable {
    /// Queued elements beyond which the batch is flushed at once: a reader that never suspends (a server faster than
    /// the client) still wakes its consumers in slices of this size.
    package static let holdLimit = 64

    private struct State {
        var signals: [any DeliverySignal] = []
        var held = 0
        var closed = false
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
            guard !state.signals.isEmpty else { return [] }
            defer {
                state.signals.removeAll(keepingCapacity: true)
                state.held = 0
            }
            return state.signals
        }
        for signal in signals { signal.signal() }
    }

    /// Flushes and stops holding: later elements handed this batch wake their consumers at once.
    package func close() {
        state.withLock { $0.closed = true }
        flush()
    }
}

extension DeliverySignal {
    /// Wakes the consumer now, or, given a `batch`, when the batch is flushed.
    @inlinable
    package func signal(in batch: DeliveryBatch?) {
        if let batch, batch.hold(self) { return }
        signal()
    }
}
