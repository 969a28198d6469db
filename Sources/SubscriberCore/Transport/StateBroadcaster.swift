/// Fans a current state out to any number of observers: each new observer first receives the current state (once one is
/// known), repeated identical states are not re-sent, and observers that fall behind keep the newest few. The one
/// broadcaster of the package: a transport's ``ConnectionState`` (``ConnectionStateBroadcaster``), the notifier's
/// connection state and ``DrivenNetworkPathMonitor``'s paths.
package final class StateBroadcaster<Value: Sendable & Equatable>: Sendable {
    private struct State {
        var current: Value?
        var finished = false
        var nextID = 0
        var observers: [Int: AsyncStream<Value>.Continuation] = [:]
    }

    private let state: Locked<State>
    private let keepingNewest: Int

    /// Creates a broadcaster in `initial` (`nil`: unknown until the first ``update(_:)``), whose observers that fall
    /// behind keep the newest `keepingNewest` states.
    package init(_ initial: Value?, keepingNewest: Int) {
        state = Locked(State(current: initial))
        self.keepingNewest = keepingNewest
    }

    /// The latest state; `nil` only while a broadcaster made without one has had no ``update(_:)``.
    package var current: Value? { state.withLock { $0.current } }

    /// Records a transition and tells every observer (repeated identical states are not re-sent).
    package func update(_ newState: Value) {
        let observers: [AsyncStream<Value>.Continuation] = state.withLock { state in
            guard state.current != newState else { return [] }
            state.current = newState
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(newState) }
    }

    /// A new observer stream starting with the current state (if known); after ``finish()``, the last state and then the
    /// end.
    package func makeStream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(keepingNewest))
        let id: Int? = state.withLock { state in
            if let current = state.current { continuation.yield(current) }
            guard !state.finished else { return nil }
            defer { state.nextID += 1 }
            state.observers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        // The handler holds the state, not the broadcaster, so a broadcaster nobody holds goes (and ends its streams).
        continuation.onTermination = { [state] _ in
            _ = state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// A broadcaster nobody holds can never update its observers again: their streams end instead of waiting for ever.
    deinit { finish() }

    /// Ends every observer stream, now and later (its owner is going away): a consumer waiting on a stream nobody can
    /// finish any more would wait for ever.
    package func finish() {
        let observers = state.withLock { state in
            state.finished = true
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish() }
    }
}

/// A transport's connection states, starting `idle`; observers keep the newest 64.
package typealias ConnectionStateBroadcaster = StateBroadcaster<ConnectionState>

extension StateBroadcaster where Value == ConnectionState {
    /// A broadcaster in the `idle` state.
    package convenience init() { self.init(.idle, keepingNewest: 64) }
}
