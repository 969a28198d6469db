import Foundation

/// The bounded queue between a producer and the one consumer of an async stream: subscription streams and the
/// notifier's observer streams.
///
/// Unlike the buffers of `AsyncStream` and `AsyncThrowingStream` it separates adding an element from waking the
/// consumer: a producer handed a ``DeliveryBatch`` enqueues a whole read's worth and the consumer wakes once per batch
/// instead of once per element. The consumer reads one element at a time (``makeThrowingStream()``) or everything
/// queued at once (``makeReader()``). Otherwise it behaves like those streams' buffers: a full queue drops the
/// new element (``OverflowPolicy/dropNewest``) or the oldest queued one (``OverflowPolicy/dropOldest``), the stream
/// ends after the queued elements, and the consumer cancelling its task or dropping the stream counts as the
/// consumer having gone.
///
/// A drop-oldest buffer given a wall clock tells when what it dropped can have been queued (``takeDroppedSince()``):
/// no earlier than the consumer's last take of the queue, as the consumer takes the whole queue at once.
///
/// Inlinable: it is on the per-event path of other modules, which then get code specialised for their element type.
@usableFromInline package final class StreamBuffer<Element: Sendable>: DeliverySignal, Sendable {
    /// What a full queue gives up.
    @usableFromInline package enum OverflowPolicy: Sendable {
        /// The new element (like `.bufferingOldest`).
        case dropNewest
        /// The oldest queued element (like `.bufferingNewest`).
        case dropOldest
    }

    /// What happened to an enqueued element.
    @usableFromInline package enum Enqueued: Sendable {
        /// Queued.
        case enqueued
        /// The queue was full: the element, or the oldest queued one, was dropped (the policy says which).
        case dropped
        /// The stream ended or the consumer has gone: nothing was queued.
        case terminated
    }

    /// How a full queue still takes an element that must not be lost (the notifier's connection events, whose loss
    /// windows and session ends an app acts on), instead of the ``OverflowPolicy``.
    @usableFromInline package struct OverflowRule: Sendable {
        /// Folds the new element into a queued one, `true` if it did (two reports of one stream's losses become one).
        @usableFromInline package var merge: @Sendable (_ queued: inout Element, _ new: Element) -> Bool
        /// Whether an element may be dropped to make room: a state a later element supersedes.
        @usableFromInline package var expendable: @Sendable (Element) -> Bool

        /// Creates a rule.
        package init(
            merge: @escaping @Sendable (_ queued: inout Element, _ new: Element) -> Bool,
            expendable: @escaping @Sendable (Element) -> Bool
        ) {
            self.merge = merge
            self.expendable = expendable
        }
    }

    @usableFromInline
    struct State {
        @usableFromInline var elements: [Element] = []
        @usableFromInline var head = 0
        /// The consumer waiting in ``next()``. It is resumed without a value: the value waits in ``handoff``.
        @usableFromInline var waiter: UnsafeContinuation<Void, Never>?
        /// What a resumed ``waiter`` returns, put here under the lock by whoever resumes it.
        @usableFromInline var handoff: Result<Element?, any Error>?
        /// Set by `finish`: how the stream ends once the queue is drained (`nil` error: normally).
        @usableFromInline var end: (any Error)?? = nil
        /// The end was handed to the consumer.
        @usableFromInline var ended = false
        /// The consumer cancelled or dropped the stream.
        @usableFromInline var gone = false
        @usableFromInline var goneHandler: (@Sendable () -> Void)?
        /// An element was dropped since the consumer last took the queue: taking it makes room (see ``onRoom(_:)``).
        @usableFromInline var overflowed = false
        @usableFromInline var roomHandler: (@Sendable () -> Void)?
        /// When the consumer last took the queue, or the buffer was made: every element queued now was queued at or
        /// after it (each take empties the queue). Kept only with a ``StreamBuffer/takeClock``.
        @usableFromInline var lastTake: Date?
        /// The earliest ``lastTake`` of the drops (of the oldest element) not yet told (``StreamBuffer/takeDroppedSince()``).
        @usableFromInline var droppedSince: Date?

        @usableFromInline init(lastTake: Date?) { self.lastTake = lastTake }

        /// The room handler to call once the lock is released, when taking elements made room after a drop.
        @inlinable
        mutating func madeRoom() -> (@Sendable () -> Void)? {
            guard overflowed else { return nil }
            overflowed = false
            return roomHandler
        }

        @inlinable var count: Int { elements.count - head }

        @inlinable
        mutating func popFirst() -> Element {
            let element = elements[head]
            head += 1
            if head == elements.count {
                elements.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 256 && head * 2 >= elements.count {
                elements.removeFirst(head)
                head = 0
            }
            return element
        }

        /// Takes `element` into a full queue by `rule`: merged into the newest queued element that takes it, else in
        /// place of the oldest expendable one, else dropped if it is expendable itself, else beyond the limit.
        @usableFromInline
        mutating func absorb(_ element: Element, by rule: OverflowRule) -> Enqueued {
            for index in stride(from: elements.count - 1, through: head, by: -1) where rule.merge(&elements[index], element) {
                return .enqueued
            }
            if let index = elements[head...].firstIndex(where: rule.expendable) {
                elements.remove(at: index)
                elements.append(element)
                return .dropped
            }
            if rule.expendable(element) { return .dropped }
            elements.append(element)
            return .enqueued
        }

        /// What `next()` returns without waiting, if anything.
        @inlinable
        mutating func ready() -> Result<Element?, any Error>? {
            if count > 0 { return .success(popFirst()) }
            if gone || ended { return .success(nil) }
            if let end {
                ended = true
                return end.map { .failure($0) } ?? .success(nil)
            }
            return nil
        }
    }

    @usableFromInline let limit: Int
    @usableFromInline let policy: OverflowPolicy
    @usableFromInline let overflowRule: OverflowRule?
    /// What times the consumer's takes, for a drop-oldest buffer without an overflow rule made with a wall clock:
    /// read once per take (never per element), on the consumer's side.
    @usableFromInline let takeClock: WallClock?
    @usableFromInline let state: Locked<State>

    /// Creates an empty buffer queueing at most `limit` elements (at least 1). The consumer takes the whole queue at
    /// once (``ConsumerToken``), so a burst of up to `limit` elements is never dropped, and at most twice `limit` are
    /// held in memory: what the consumer took and has yet to read, and a full queue behind it. With an
    /// `overflowRule`, a full queue follows it instead of `policy`, and holds more than `limit` only by what the rule
    /// neither merges nor drops. With a `wallClock`, a ``OverflowPolicy/dropOldest`` buffer without a rule times the
    /// consumer's takes, so a drop tells since when the dropped element can have been queued (``takeDroppedSince()``).
    package init(limit: Int, policy: OverflowPolicy = .dropNewest, overflowRule: OverflowRule? = nil, wallClock: WallClock? = nil) {
        self.limit = max(1, limit)
        self.policy = policy
        self.overflowRule = overflowRule
        let takeClock = policy == .dropOldest && overflowRule == nil ? wallClock : nil
        self.takeClock = takeClock
        self.state = Locked(State(lastTake: takeClock?.now()))
    }

    /// The stream the consumer iterates, ending with an error if ``finish(throwing:)`` got one. Dropping it (and its
    /// iterators) counts as the consumer having gone.
    @inlinable
    package func makeThrowingStream() -> AsyncThrowingStream<Element, any Error> {
        let token = ConsumerToken(self)
        return AsyncThrowingStream { try await token.next() }
    }

    /// The consumer's side as batches: each read takes everything queued at once (see ``BatchReader``).
    package func makeReader() -> BatchReader<Element> { BatchReader(ConsumerToken(self)) }

    /// The stream the consumer iterates, for buffers that never finish with an error.
    @inlinable
    package func makeStream() -> AsyncStream<Element> {
        let token = ConsumerToken(self)
        return AsyncStream { (try? await token.next()) ?? nil }
    }

    /// Queues `element` without waking the consumer; call ``signal()`` after the last element of a batch. The element
    /// is moved into the queue, not copied (a copy retains and releases every reference it holds).
    @inlinable
    package func enqueue(_ element: consuming Element) -> Enqueued {
        var element = Optional(element)
        return state.withLock { state in
            if state.gone || state.end != nil { return .terminated }
            guard state.count >= limit else {
                state.elements.append(element.take()!)
                return .enqueued
            }
            state.overflowed = true
            if let overflowRule { return state.absorb(element.take()!, by: overflowRule) }
            if policy == .dropOldest {
                _ = state.popFirst()
                state.elements.append(element.take()!)
                // The dropped element was queued after the consumer's last take (or the buffer's making).
                if let lastTake = state.lastTake { state.droppedSince = min(state.droppedSince ?? lastTake, lastTake) }
            }
            return .dropped
        }
    }

    /// The earliest instant the elements dropped as the oldest queued, since the last call, can have been queued: the
    /// consumer's last take of the queue before each drop (or the buffer's making). `nil` when none was dropped so,
    /// or the buffer times no takes (no wall clock, ``OverflowPolicy/dropNewest``, an overflow rule): a dropped new
    /// element arrived at the drop. For loss windows, which must cover what was dropped.
    package func takeDroppedSince() -> Date? {
        state.withLock { state in
            defer { state.droppedSince = nil }
            return state.droppedSince
        }
    }

    /// Queues `element` even when the queue is full: for the last element before the stream ends (a loss report),
    /// which must not be dropped.
    package func enqueueBeyondLimit(_ element: Element) -> Enqueued {
        state.withLock { state in
            if state.gone || state.end != nil { return .terminated }
            state.elements.append(element)
            return .enqueued
        }
    }

    /// Wakes a waiting consumer if there is something for it.
    @inlinable
    package func signal() {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard let waiter = state.waiter, let ready = state.ready() else { return nil }
            state.waiter = nil
            state.handoff = ready
            return waiter
        }
        // Resumed after unlocking, never under the lock: resuming takes the consumer task's status lock, and a
        // cancellation of that task holds its status lock while its handler (`consumerGone()`) takes ours. Resuming
        // under the lock deadlocked against a cancel (the soak found it: a reader on the event loop flushing its batch
        // while the notifier cancelled the consumer).
        waiter?.resume()
    }

    /// Ends the stream after the queued elements, normally or with `error`, and wakes the consumer.
    package func finish(throwing error: (any Error)? = nil) {
        state.withLock { state in
            if state.end == nil && !state.gone { state.end = .some(error) }
        }
        signal()
    }

    /// Runs `handler` on the consumer's thread whenever the consumer takes elements from a queue that dropped one since
    /// it last took: there is room again (for the loss report a ``SubscriptionSink`` holds, which must not wait for the
    /// next element). Not under the queue's lock.
    package func onRoom(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.roomHandler = handler }
    }

    /// Runs `handler` once if the consumer cancels or drops the stream before it was finished; at once if it already
    /// did.
    package func onConsumerGone(_ handler: @escaping @Sendable () -> Void) {
        let callNow = state.withLock { state -> Bool in
            if state.gone { return state.end == nil }
            state.goneHandler = handler
            return false
        }
        if callNow { handler() }
    }

    /// The consumer's side: the next element, waiting for one; `nil` at the end.
    @inlinable
    func next() async throws -> Element? {
        if Task.isCancelled {
            consumerGone()
            return nil
        }
        let (ready, room) = state.withLock { state in (state.ready(), state.madeRoom()) }
        room?()
        if let ready { return try ready.get() }
        // The element is handed over through the locked state, not through the continuation (which carries no value):
        // a continuation resumed before its task reaches the await lets the task run on without any happens-before edge
        // the thread sanitizer is told of (the runtime's fast path in `swift_continuation_await` synchronises with an
        // acquire load that carries no TSan annotation), so a value passed through it was reported as a race with the
        // resume. The producer writes the handoff before it unlocks and the consumer reads it after it locks: an edge
        // the sanitizer sees. The resume itself happens after unlocking (see `signal()`).
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if let ready = state.ready() {
                        state.handoff = ready
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            consumerGone()
        }
        let handoff = state.withLock { state -> Result<Element?, any Error>? in
            defer { state.handoff = nil }
            return state.handoff
        }
        return try handoff?.get() ?? nil
    }

    @usableFromInline
    func consumerGone() {
        let (handler, waiter) = state.withLock { state -> ((@Sendable () -> Void)?, UnsafeContinuation<Void, Never>?) in
            guard !state.gone else { return (nil, nil) }
            state.gone = true
            let waiter = state.waiter
            if waiter != nil {
                state.waiter = nil
                state.handoff = .success(nil)
            }
            state.elements.removeAll()
            state.head = 0
            defer { state.goneHandler = nil }
            return (state.end != nil ? nil : state.goneHandler, waiter)
        }
        waiter?.resume()  // after unlocking, as in `signal()`
        handler?()
    }
}

/// Held by the consumer's stream only: when the stream and its iterators are gone, so is the consumer.
///
/// It also holds what the consumer took from the queue: everything queued at once, by swapping arrays, so the consumer
/// takes the producer's lock once per batch instead of once per element (the two contend on it while a fast producer
/// fills the queue). The producer goes on filling the array the consumer emptied.
@usableFromInline
final class ConsumerToken<Element: Sendable>: Sendable {
    @usableFromInline let buffer: StreamBuffer<Element>
    /// The taken elements not yet read, last to be read first: each read moves one out (`popLast()`) instead of
    /// copying it, which for a model of strings saves a retain and a release per field. Its lock is the consumer's own
    /// (the producer never takes it); the queue's lock is only ever taken inside it, never the other way round.
    @usableFromInline let taken = Locked([Element]())

    @inlinable init(_ buffer: StreamBuffer<Element>) { self.buffer = buffer }
    @inlinable deinit { buffer.consumerGone() }

    /// The next element: from what was taken, else everything queued is taken, else the buffer's waiting `next()`.
    @inlinable
    func next() async throws -> Element? {
        if Task.isCancelled {
            buffer.consumerGone()
            return nil
        }
        let ready = taken.withLock { taken -> Element? in
            if let element = taken.popLast() { return element }
            guard takeQueue(into: &taken) else { return nil }
            taken.reverseByMoving()
            return taken.popLast()
        }
        // Unwrapped by consuming: `if let` binds a copy of an element that stays alive (a retain per string it holds).
        switch consume ready {
        case .some(let element): return element
        case .none: return try await buffer.next()
        }
    }

    /// Swaps the queue's elements (those not yet read) into `elements`, which must be empty: the producer goes on
    /// filling the emptied array. `false` when nothing is queued. The queue's lock is held for the swap only.
    ///
    /// The queue is empty once the lock is released: a timed buffer records the take (``StreamBuffer/State/lastTake``)
    /// even when it found nothing, as what the consumer waits for next, and what the wait's handoff leaves queued, is
    /// queued after it. The clock is read before the lock: never later than the take.
    @inlinable
    func takeQueue(into elements: inout [Element]) -> Bool {
        let now = buffer.takeClock?.now()
        let (head, room) = buffer.state.withLock { state -> (Int?, (@Sendable () -> Void)?) in
            if let now { state.lastTake = now }
            guard state.count > 0 else { return (nil, nil) }
            swap(&state.elements, &elements)
            defer { state.head = 0 }
            return (state.head, state.madeRoom())
        }
        room?()
        guard let head else { return false }
        if head > 0 { elements.removeFirst(head) }
        return true
    }

    /// Everything queued, into `batch` (emptied first, its storage reused): what was taken and not yet read, else the
    /// whole queue, else the next element once there is one. `false` at the end of the stream.
    @inlinable
    func next(into batch: inout [Element]) async throws -> Bool {
        batch.removeAll(keepingCapacity: true)
        if Task.isCancelled {
            buffer.consumerGone()
            return false
        }
        taken.withLock { taken in
            guard !taken.isEmpty else { return }
            swap(&taken, &batch)
            batch.reverseByMoving()
        }
        if batch.isEmpty && !takeQueue(into: &batch) {
            guard let first = try await buffer.next() else { return false }
            batch.append(first)
        }
        return true
    }
}

/// The consumer's side of a ``StreamBuffer`` read a batch at a time: each ``next(into:)`` takes everything queued, so
/// a reader that delivers further (a notifier pump) knows when it has drained its upstream and can wake its own
/// consumers once for the lot. Dropping the reader counts as the consumer having gone.
package struct BatchReader<Element: Sendable>: Sendable {
    @usableFromInline let token: ConsumerToken<Element>

    @inlinable init(_ token: ConsumerToken<Element>) { self.token = token }

    /// Replaces `batch`'s contents with everything queued, waiting for at least one element; `false` at the end of
    /// the stream (then `batch` is empty). Throws the error the stream ended with.
    @inlinable
    package func next(into batch: inout [Element]) async throws -> Bool { try await token.next(into: &batch) }

    /// The same elements one at a time (for consumers that do not read in batches). The consumer has gone when the
    /// reader and this stream are both dropped, so a transport hands out only the stream.
    package var elements: AsyncThrowingStream<Element, any Error> {
        let token = token
        return AsyncThrowingStream { try await token.next() }
    }
}
