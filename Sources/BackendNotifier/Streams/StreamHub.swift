import Logging
import SubscriberCore

/// One public notifier stream (for example `devicePresenceValues()`): any number of observers, each with its own
/// bounded buffer. Thread-safe, so upstream tasks deliver without hopping onto the notifier actor.
final class StreamHub<Value: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var observers: [Int: AsyncStream<Value>.Continuation] = [:]
        var delivered = 0
        var dropped = 0
    }

    let name: String
    private let state = Locked(State())
    private let policy: ObserverBufferPolicy
    private let onDrop: @Sendable (String, Int) -> Void

    /// - Parameter onDrop: called with the stream's name and the number of values full observer buffers dropped, once
    ///   per delivery that dropped any (metrics, logs, loss reports).
    init(name: String, policy: ObserverBufferPolicy, onDrop: @escaping @Sendable (String, Int) -> Void) {
        self.name = name
        self.policy = policy
        self.onDrop = onDrop
    }

    /// A new observer stream. `onLastObserverGone` runs when this observer cancels and no other remains.
    func makeStream(onLastObserverGone: @escaping @Sendable () -> Void) -> AsyncStream<Value> {
        let buffering: AsyncStream<Value>.Continuation.BufferingPolicy =
            policy.overflow == .dropOldest ? .bufferingNewest(policy.limit) : .bufferingOldest(policy.limit)
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: buffering)
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.observers[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let empty = self.state.withLock { state in
                state.observers.removeValue(forKey: id)
                return state.observers.isEmpty
            }
            if empty { onLastObserverGone() }
        }
        return stream
    }

    /// Delivers to every observer; returns how many received it.
    @discardableResult
    func yield(_ value: Value) -> Int {
        let observers = state.withLock { Array($0.observers.values) }
        var received = 0
        var drops = 0
        for observer in observers {
            switch observer.yield(value) {
            case .enqueued: received += 1
            case .dropped:
                received += 1
                drops += 1
            case .terminated: break
            @unknown default: break
            }
        }
        state.withLock { state in
            state.delivered += received
            state.dropped += drops
        }
        if drops > 0 { onDrop(name, drops) }
        return received
    }

    var observerCount: Int { state.withLock { $0.observers.count } }
    var hasObservers: Bool { observerCount > 0 }
    var deliveredCount: Int { state.withLock { $0.delivered } }
    var droppedCount: Int { state.withLock { $0.dropped } }
}
