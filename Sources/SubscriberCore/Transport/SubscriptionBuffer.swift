/// The bounded queue between a subscription's producer and its one consumer, behind the `AsyncThrowingStream` the
/// consumer iterates.
///
/// Unlike `AsyncThrowingStream`'s own buffer it separates adding an event from waking the consumer: a producer that
/// holds a batch (``DeliveryBatch``) enqueues all of it and then signals once, so the consumer wakes once per batch
/// instead of once per event. Semantics otherwise match `AsyncThrowingStream` with `.bufferingOldest(limit)`: a full
/// queue drops the new event, the stream ends after the queued events, and the consumer cancelling its task or
/// dropping the stream counts as the consumer having gone.
package final class SubscriptionBuffer: Sendable {
    /// What happened to an enqueued event.
    package enum Enqueued: Sendable {
        case enqueued
        /// The queue was full.
        case dropped
        /// The stream ended or the consumer has gone.
        case terminated
    }

    private struct State {
        var events: [SubscriptionEvent] = []
        var head = 0
        var waiter: UnsafeContinuation<SubscriptionEvent?, any Error>?
        /// Set by `finish`: how the stream ends once the queue is drained (`nil` error: normally).
        var end: (any Error)??
        /// The end was handed to the consumer.
        var ended = false
        /// The consumer cancelled or dropped the stream.
        var gone = false
        var goneHandler: (@Sendable () -> Void)?

        var count: Int { events.count - head }

        mutating func popFirst() -> SubscriptionEvent {
            let event = events[head]
            head += 1
            if head == events.count {
                events.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 256 && head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
            return event
        }

        /// What `next()` returns without waiting, if anything.
        mutating func ready() -> Result<SubscriptionEvent?, any Error>? {
            if count > 0 { return .success(popFirst()) }
            if gone || ended { return .success(nil) }
            if let end {
                ended = true
                return end.map { .failure($0) } ?? .success(nil)
            }
            return nil
        }
    }

    private let limit: Int
    private let state = Locked(State())

    /// Creates an empty buffer holding at most `limit` events (at least 1).
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The stream the consumer iterates. Dropping it (and its iterators) counts as the consumer having gone.
    package func makeStream() -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        let token = ConsumerToken(buffer: self)
        return AsyncThrowingStream { try await token.buffer.next() }
    }

    /// Queues `event` without waking the consumer; call ``signal()`` after the last event of a batch.
    package func enqueue(_ event: SubscriptionEvent) -> Enqueued {
        state.withLock { state in
            if state.gone || state.end != nil { return .terminated }
            if state.count >= limit { return .dropped }
            state.events.append(event)
            return .enqueued
        }
    }

    /// Wakes a waiting consumer if there is something for it.
    package func signal() {
        let wake = state.withLock { state -> (UnsafeContinuation<SubscriptionEvent?, any Error>, Result<SubscriptionEvent?, any Error>)? in
            guard let waiter = state.waiter, let ready = state.ready() else { return nil }
            state.waiter = nil
            return (waiter, ready)
        }
        if let (waiter, result) = wake { waiter.resume(with: result) }
    }

    /// Ends the stream after the queued events, normally or with `error`.
    package func finish(throwing error: (any Error)? = nil) {
        state.withLock { state in
            if state.end == nil && !state.gone { state.end = .some(error) }
        }
        signal()
    }

    /// Runs `handler` once if the consumer cancels or drops the stream before it ended; at once if it already did.
    package func onConsumerGone(_ handler: @escaping @Sendable () -> Void) {
        let callNow = state.withLock { state -> Bool in
            if state.gone { return state.end == nil }
            state.goneHandler = handler
            return false
        }
        if callNow { handler() }
    }

    func next() async throws -> SubscriptionEvent? {
        if Task.isCancelled {
            consumerGone()
            return nil
        }
        if let ready = state.withLock({ $0.ready() }) { return try ready.get() }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<SubscriptionEvent?, any Error>) in
                let ready = state.withLock { state -> Result<SubscriptionEvent?, any Error>? in
                    if let ready = state.ready() { return ready }
                    if state.gone { return .success(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            consumerGone()
        }
    }

    func consumerGone() {
        let (waiter, handler) = state.withLock { state -> (UnsafeContinuation<SubscriptionEvent?, any Error>?, (@Sendable () -> Void)?) in
            guard !state.gone else { return (nil, nil) }
            state.gone = true
            let waiter = state.waiter
            state.waiter = nil
            state.events.removeAll()
            state.head = 0
            defer { state.goneHandler = nil }
            return (waiter, state.ended || state.end != nil ? nil : state.goneHandler)
        }
        waiter?.resume(returning: nil)
        handler?()
    }
}

/// Held by the consumer's stream only: when the stream and its iterators are gone, so is the consumer.
private final class ConsumerToken: Sendable {
    let buffer: SubscriptionBuffer
    init(buffer: SubscriptionBuffer) { self.buffer = buffer }
    deinit { buffer.consumerGone() }
}
