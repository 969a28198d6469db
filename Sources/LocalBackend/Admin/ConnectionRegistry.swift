import SubscriberCore

/// Every open WebSocket of the server, of both protocols, so faults (`closeAll`) and ``LocalBackendServer/stop()``
/// can close them all. The GraphQL side registers its connections here too.
public final class ConnectionRegistry: Sendable {
    /// Which protocol a connection speaks.
    public enum Kind: String, Sendable, Codable {
        /// AWS AppSync Events (`/event/realtime`).
        case appSyncEvents = "appsync"
        /// The legacy graphql-transport-ws endpoint (`/graphql`).
        case graphQL = "graphql"
    }

    private struct Entry {
        let kind: Kind
        let close: @Sendable (UInt16, String) -> Void
    }

    private struct State {
        var nextID: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
        var opened: [Kind: Int] = [:]
    }

    private let state = Locked(State())

    /// Creates an empty registry.
    public init() {}

    /// Registers an open connection; `close` must start closing it with the given code and reason without waiting.
    /// Returns the connection's id, for ``unregister(_:)``.
    public func register(kind: Kind, close: @escaping @Sendable (UInt16, String) -> Void) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(kind: kind, close: close)
            state.opened[kind, default: 0] += 1
            return id
        }
    }

    /// Forgets a connection that has ended.
    public func unregister(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Starts closing every connection with `code`; returns how many there were.
    @discardableResult
    public func closeAll(code: UInt16, reason: String) -> Int {
        let entries = state.withLock { Array($0.entries.values) }
        for entry in entries { entry.close(code, reason) }
        return entries.count
    }

    /// Closes every open connection of one kind; returns how many were open.
    @discardableResult
    public func closeAll(of kind: Kind, code: UInt16, reason: String) -> Int {
        let entries = state.withLock { $0.entries.values.filter { $0.kind == kind } }
        for entry in entries { entry.close(code, reason) }
        return entries.count
    }

    /// The number of open connections, optionally of one kind.
    public func count(of kind: Kind? = nil) -> Int {
        state.withLock { state in
            guard let kind else { return state.entries.count }
            return state.entries.values.filter { $0.kind == kind }.count
        }
    }

    /// The number of connections registered since the server started (open or not), optionally of one kind.
    public func openedCount(of kind: Kind? = nil) -> Int {
        state.withLock { state in kind.map { state.opened[$0, default: 0] } ?? state.opened.values.reduce(0, +) }
    }

    /// Waits until every connection has ended, or `timeout` passes; returns whether none is left.
    func waitUntilEmpty(timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while count() > 0 {
            guard clock.now < deadline else { return false }
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return count() == 0 }
        }
        return true
    }
}
