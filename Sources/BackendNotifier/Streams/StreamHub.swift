import Logging
import SubscriberCore

/// One public notifier stream (for example `devicePresenceValues()`): any number of observers, each with its own
/// bounded buffer. Thread-safe, so upstream tasks deliver without hopping onto the notifier actor; on an upstream pump
/// with batched delivery, each observer is woken once per batch rather than once per value.
final class StreamHub<Value: Sendable>: Sendable {
    private struct State {
        var nextID = 0
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
    private let onDrop: @Sendable (String, Int) -> Void

    /// - Parameter onDrop: called with the stream's name and the number of values full observer buffers dropped, once
    ///   per delivery that dropped any (metrics, logs, loss reports).
    init(
        name: String, policy: ObserverBufferPolicy, metrics: NotifierMetrics.StreamMetrics? = nil,
        onDrop: @escaping @Sendable (String, Int) -> Void
    ) {
        self.name = name
        self.policy = policy
        self.metrics = metrics
        self.onDrop = onDrop
    }

    /// A new observer stream. `onLastObserverGone` runs when this observer cancels and no other remains.
    func makeStream(onLastObserverGone: @escaping @Sendable () -> Void) -> AsyncStream<Value> {
        let buffer = StreamBuffer<Value>(limit: policy.limit, policy: policy.overflow == .dropOldest ? .dropOldest : .dropNewest)
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.observers[state.nextID] = buffer
            return state.nextID
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

    /// Delivers to every observer; returns how many received it. `value` is made only if there is an observer.
    @discardableResult
    func yield(_ value: @autoclosure () -> Value) -> Int {
        let observers = state.withLock { $0.buffers }
        guard !observers.isEmpty else { return 0 }
        let value = value()
        var received = 0
        var drops = 0
        for observer in observers {
            switch observer.enqueue(value) {
            case .enqueued: received += 1
            case .dropped:
                received += 1
                drops += 1
            case .terminated: break
            }
            observer.signalOrHold()
        }
        if received > 0 {
            state.withLock { state in
                state.delivered += received
                state.dropped += drops
            }
        }
        if drops > 0 { onDrop(name, drops) }
        return received
    }

    var observerCount: Int { state.withLock { $0.observers.count } }
    var hasObservers: Bool { observerCount > 0 }
    var deliveredCount: Int { state.withLock { $0.delivered } }
    var droppedCount: Int { state.withLock { $0.dropped } }
}
