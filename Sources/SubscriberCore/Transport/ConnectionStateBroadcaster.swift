/// Fans the current ``ConnectionState`` out to any number of observers; each new observer first receives
/// the current state. Transports own one and call ``update(_:)`` on every transition.
package final class ConnectionStateBroadcaster: Sendable {
    private struct State {
        var current: ConnectionState = .idle
        var nextID = 0
        var observers: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
    }

    private let state = Locked(State())

    /// Creates a broadcaster in the `idle` state.
    package init() {}

    /// The latest state.
    package var current: ConnectionState { state.withLock { $0.current } }

    /// Records a transition and tells every observer (repeated identical states are not re-sent).
    package func update(_ newState: ConnectionState) {
        let observers: [AsyncStream<ConnectionState>.Continuation] = state.withLock { state in
            guard state.current != newState else { return [] }
            state.current = newState
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(newState) }
    }

    /// A new observer stream starting with the current state. Observers that fall behind keep the newest 64 states.
    package func makeStream() -> AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream<ConnectionState>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id: Int = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = continuation
            continuation.yield(state.current)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every observer stream (the transport is going away).
    package func finish() {
        let observers = state.withLock { state in
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish() }
    }
}
