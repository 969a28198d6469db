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
///
/// It is not `Sendable`: the compiler proves that only the task that made a batch uses it, so it needs no lock.
@usableFromInline package final class DeliveryBatch {
    /// Queued elements beyond which the batch is flushed at once: a reader that never suspends (a server faster than
    /// the client) still wakes its consumers in slices of this size.
    package static let holdLimit = 64

    private struct State {
        var signals: [any DeliverySignal] = []
        var held = 0
        var closed = false
    }

    /// Behind a pointer: no dynamic exclusivity check per element (one task uses the batch).
    private let state = UnsafeMutablePointer<State>.allocate(capacity: 1)

    package init() { state.initialize(to: State()) }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Records that `signal` has one more element queued whose consumer is still to be woken. Returns `false` once
    /// the batch is closed: the caller wakes the consumer itself.
    @usableFromInline package func hold(_ signal: any DeliverySignal) -> Bool {
        guard !state.pointee.closed else { return false }
        // Consecutive elements mostly go to the same consumer; one listed twice is merely woken twice.
        if state.pointee.signals.last !== signal { state.pointee.signals.append(signal) }
        state.pointee.held += 1
        if state.pointee.held >= Self.holdLimit { flush() }
        return true
    }

    /// Wakes every consumer that has elements queued since the last flush.
    @usableFromInline package func flush() {
        guard !state.pointee.signals.isEmpty else { return }
        // Taken out before anyone is woken and its storage put back after: a copy emptied in place would allocate new
        // storage on every flush.
        var signals: [any DeliverySignal] = []
        swap(&signals, &state.pointee.signals)
        state.pointee.held = 0
        for signal in signals { signal.signal() }
        if state.pointee.signals.isEmpty {
            signals.removeAll(keepingCapacity: true)
            state.pointee.signals = signals
        }
    }

    /// Flushes and stops holding: later elements handed this batch wake their consumers at once.
    package func close() {
        state.pointee.closed = true
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
