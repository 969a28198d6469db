// STUB: replaced by the real implementation (helper in progress).
public struct NIOWebSocketConnector: WebSocketConnector {
    public init() {}
    public func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        throw WebSocketSeamError.connectionFailed("stub")
    }
}
