import Foundation
import Logging
import SubscriberCore

/// What a ``StreamHub`` does with what its observers' full buffers dropped: told the stream, the count and, for
/// drop-oldest buffers, the earliest instant a dropped value can have been queued (`nil`: it arrived at the drop).
struct ObserverDrops: Sendable {
    /// Times the takes of the observers' drop-oldest buffers (``StreamBuffer/takeDroppedSince()``); `nil`: none.
    let wallClock: WallClock?
    let report: @Sendable (_ stream: String, _ count: Int, _ queuedSince: Date?) -> Void
}

/// One public notifier stream (for example `devicePresenceValues()`): any number of observers, each with its own
/// bounded buffer. Thread-safe, so upstream tasks deliver without hopping onto the notifier actor; an upstream pump
/// hands its batch along, so each observer is woken once per batch rather than once per value.
final class StreamHub<Value: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        /// ``finish()`` was called: no observer is added any more.
        var finished = false
        var observers: [Int: StreamBuffer<Value>] = [:] {
            didSet { buffers = Array(observers.values) }
        }
        /// The observers as delivery reads them: taken under the lock without copying.
        var buffers: [StreamBuffer<Value>] = []
        var delivered = 0
        var dropped = 0
    }

    let name: String
    /// Delivery counts and latency of this stream, `nil` for streams without them.
    let metrics: NotifierMetrics.StreamMetrics?
    private let state = Locked(State())
    private let policy: ObserverBufferPolicy
    private let overflowRule: StreamBuffer<Value>.OverflowRule?
    private let drops: ObserverDrops

    /// - Parameters:
    ///   - overflowRule: what a full observer buffer does instead of `policy`'s overflow (the connection events).
    ///   - drops: told the stream's name, the number of values full observer buffers dropped and since when the
    ///     oldest of them can have been queued, once per delivery that dropped any (metrics, logs, loss reports).
    init(
        name: String, policy: ObserverBufferPolicy, overflowRule: StreamBuffer<Value>.OverflowRule? = nil,
        metrics: NotifierMetrics.StreamMetrics? = nil, drops: ObserverDrops
    ) {
        self.name = name
        self.policy = policy
        self.overflowRule = overflowRule
        self.metrics = metrics
        self.drops = drops
    }

    /// A hub whose drops need no window (`onDrop` is told the stream's name and the count).
    convenience init(
        name: String, policy: ObserverBufferPolicy, overflowRule: StreamBuffer<Value>.OverflowRule? = nil,
        metrics: NotifierMetrics.StreamMetrics? = nil, onDrop: @escaping @Sendable (String, Int) -> Void
    ) {
        self.init(
            name: name, policy: policy, overflowRule: overflowRule, metrics: metrics,
            drops: ObserverDrops(wallClock: nil) { stream, count, _ in onDrop(stream, count) })
    }

    /// A new observer stream. `onLastObserverGone` runs when this observer cancels and no other remains. After
    /// ``finish()`` the stream is already finished.
    func makeStream(onLastObserverGone: @escaping @Sendable () -> Void) -> AsyncStream<Value> {
        let buffer = StreamBuffer<Value>(
            limit: policy.limit, policy: policy.overflow == .dropOldest ? .dropOldest : .dropNewest, overflowRule: overflowRule,
            wallClock: drops.wallClock)
        let id = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            defer { state.nextID += 1 }
            state.observers[state.nextID] = buffer
            return state.nextID
        }
        guard let id else {
            buffer.finish()
            return buffer.makeStream()
        }
        buffer.onConsumerGone { [weak self] in
            guard let self else { return }
            let empty = self.state.withLock { state in
                state.observers.removeValue(forKey: id)
                return state.observers.isEmpty
            }
            if empty { onLastObserverGone() }
        }
        return buffer.makeStream()
    }

    /// Delivers to every observer; returns how many received it. `value` is made only if there is an observer. With a
    /// `batch`, the observers are woken when it is flushed (once for all it holds), else at once.
    ///
    /// One lock round per value: the delivery is counted when the observers are read, and corrected afterwards only in
    /// the rare case an observer ended meanwhile or a full buffer dropped (then each dropping buffer also tells since
    /// when what it dropped was queued). The last observer is given the value itself, the others copies (a copy
    /// retains every string the value holds).
    @discardableResult
    func yield(_ value: @autoclosure () -> Value, into batch: DeliveryBatch? = nil) -> Int {
        let observers = state.withLock { state -> [StreamBuffer<Value>] in
            state.delivered += state.buffers.count
            return state.buffers
        }
        guard !observers.isEmpty else { return 0 }
        var terminated = 0
        var dropped = 0
        var queuedSince: Date?
        func count(_ enqueued: StreamBuffer<Value>.Enqueued, _ observer: StreamBuffer<Value>) {
            switch enqueued {
            case .enqueued: break
            case .dropped:
                dropped += 1
                // A dropped oldest value was queued before this one: the window must reach back to it.
                if let since = observer.takeDroppedSince() { queuedSince = min(queuedSince ?? since, since) }
            case .terminated: terminated += 1
            }
        }
        let value = value()
        for observer in observers.dropLast() {
            count(observer.enqueue(value), observer)
            observer.signal(in: batch)
        }
        let last = observers[observers.count - 1]
        count(last.enqueue(consume value), last)
        last.signal(in: batch)
        if terminated > 0 || dropped > 0 {
            state.withLock { state in
                state.delivered -= terminated
                state.dropped += dropped
            }
        }
        if dropped > 0 { drops.report(name, dropped, queuedSince) }
        return observers.count - terminated
    }

    /// Ends every observer's stream (after the values queued for it) and lets go of their buffers; later observers
    /// get a finished stream. For a notifier that shuts down or is released.
    func finish() {
        let buffers = state.withLock { state in
            state.finished = true
            defer { state.observers.removeAll() }
            return state.buffers
        }
        for buffer in buffers { buffer.finish() }
    }

    /// The observers' buffers (for tests that check they are released).
    var observerBuffers: [StreamBuffer<Value>] { state.withLock { $0.buffers } }

    var observerCount: Int { state.withLock { $0.observers.count } }
    var hasObservers: Bool { observerCount > 0 }
    var deliveredCount: Int { state.withLock { $0.delivered } }
    var droppedCount: Int { state.withLock { $0.dropped } }
}
