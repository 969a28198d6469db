/// A ``NetworkPathMonitor`` the app (or a test) drives by calling ``update(_:)``: for platforms without
/// `NWPathMonitor` (Linux), for apps that already observe the network their own way, and for tests.
public final class DrivenNetworkPathMonitor: NetworkPathMonitor {
    private struct State {
        var current: NetworkPath?
        var nextID = 0
        var observers: [Int: AsyncStream<NetworkPath>.Continuation] = [:]
    }

    private let state: Locked<State>

    /// Creates a monitor whose current path is `initial` (`nil`: unknown until the first ``update(_:)``).
    public init(_ initial: NetworkPath? = .satisfied(.other)) {
        state = Locked(State(current: initial))
    }

    /// The latest path, if one is known.
    public var current: NetworkPath? { state.withLock { $0.current } }

    /// Reports a path to every stream. A path equal to the current one is not repeated.
    public func update(_ path: NetworkPath) {
        let observers: [AsyncStream<NetworkPath>.Continuation] = state.withLock { state in
            guard state.current != path else { return [] }
            state.current = path
            return Array(state.observers.values)
        }
        for observer in observers { observer.yield(path) }
    }

    /// A new stream that starts with the current path (if known). A consumer that falls behind keeps the newest 8.
    public func paths() -> AsyncStream<NetworkPath> {
        let (stream, continuation) = AsyncStream<NetworkPath>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id: Int = state.withLock { state in
            defer { state.nextID += 1 }
            state.observers[state.nextID] = continuation
            if let current = state.current { continuation.yield(current) }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every stream (the monitor is going away).
    public func finish() {
        let observers = state.withLock { state in
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish() }
    }
}
