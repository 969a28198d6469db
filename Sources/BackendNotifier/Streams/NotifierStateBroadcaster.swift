import SubscriberCore

/// Fans the notifier's ``NotifierConnectionState`` out to any number of observers; each new observer first receives
/// the current state, and repeated identical states are not re-sent.
final class NotifierStateBroadcaster: Sendable {
    private struct State {
        var current: NotifierConnectionState = .offline
        var finished = false
        var nextID = 0
        var observers: [Int: AsyncStream<NotifierConnectionState>.Continuation] = [:]
    }

    private let state = Locked(State())

    /// The latest state.
    var current: NotifierConnectionState { state.withLock { $0.current } }

    /// Records a state and tells every observer when it changed.
    func update(_ newState: NotifierConnectionState) {
        let observers: [AsyncStream<NotifierConnectionState>.Continuation] = state.withLock { state in
            guard state.current != newState else { return [] }
            state.current = newState
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(newState) }
    }

    /// A new observer stream starting with the current state (observers that fall behind keep the newest 16 states).
    func makeStream() -> AsyncStream<NotifierConnectionState> {
        let (stream, continuation) = AsyncStream<NotifierConnectionState>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id: Int? = state.withLock { state in
            continuation.yield(state.current)
            guard !state.finished else { return nil }
            defer { state.nextID += 1 }
            state.observers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every observer's stream; later observers get the last state, then the end. For a notifier that shuts
    /// down or is released: a consumer waiting on a stream nobody can finish any more would wait for ever.
    func finish() {
        let observers = state.withLock { state in
            state.finished = true
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish() }
    }
}
