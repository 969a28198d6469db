extension WebSocketConnector {
    /// Connects, giving up after `timeout` on `clock` (WSClient cannot time out a stalled upgrade by itself).
    ///
    /// - Throws: ``WebSocketSeamError/connectionFailed(_:)`` on timeout, or the connector's own error.
    public func connect(_ request: WebSocketRequest, timeout: Duration, clock: any Clock<Duration>) async throws -> any WebSocketConnection {
        try await withThrowingTaskGroup(of: (any WebSocketConnection)?.self) { group in
            group.addTask { try await self.connect(request) }
            group.addTask {
                try await clock.sleep(for: timeout, tolerance: nil)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let connection = first else {
                throw WebSocketSeamError.connectionFailed("no WebSocket upgrade within \(timeout)")
            }
            return connection
        }
    }
}
