import Foundation
import SubscriberCore

/// What ``OpenWebSocket/receive()`` yields: a message, or the end of the connection.
public enum WebSocketInboundEvent: Sendable, Equatable {
    /// A data message from the peer.
    case message(WebSocketMessage)
    /// The connection has ended; every later `receive()` returns this again.
    case closed(WebSocketCloseInfo)
}

/// For tests that speak a protocol by hand: a connection held open as an object over the closure-scoped seam. A
/// background task keeps the connector's scope open until ``close(code:reason:)`` or the peer ends it.
public final class OpenWebSocket: Sendable {
    private let connection: any WebSocketConnection
    private let release: OneShotSignal<Void>
    private let scope: Task<WebSocketCloseInfo, Never>

    private init(connection: any WebSocketConnection, release: OneShotSignal<Void>, scope: Task<WebSocketCloseInfo, Never>) {
        self.connection = connection
        self.release = release
        self.scope = scope
    }

    /// Opens a connection with `connector`; throws the seam's error when it cannot.
    public static func open(_ connector: any WebSocketConnector, _ request: WebSocketRequest) async throws -> OpenWebSocket {
        let opened = OneShotSignal<Result<any WebSocketConnection, any Error>>()
        let release = OneShotSignal<Void>()
        let scope = Task {
            do {
                let result = try await connector.withConnection(request) { connection in
                    opened.fire(.success(connection))
                    _ = await release.wait()
                }
                return result.close
            } catch {
                opened.fire(.failure(error))
                return WebSocketCloseInfo(code: nil, reason: "\(error)")
            }
        }
        let outcome = await withTaskCancellationHandler {
            await opened.wait()
        } onCancel: {
            scope.cancel()
        }
        guard let outcome else {
            scope.cancel()
            throw CancellationError()
        }
        return OpenWebSocket(connection: try outcome.get(), release: release, scope: scope)
    }

    /// The subprotocol the server selected, if the connector can tell.
    public var negotiatedSubprotocol: String? { connection.negotiatedSubprotocol }

    /// The next message, or how the connection ended.
    public func receive() async -> WebSocketInboundEvent {
        do {
            if let message = try await connection.receive() { return .message(message) }
        } catch {
            release.fire()
            return .closed(WebSocketCloseInfo(code: nil, reason: "\(error)"))
        }
        release.fire()
        return .closed(await scope.value)
    }

    /// Sends a message.
    public func send(_ message: WebSocketMessage) async throws { try await connection.send(message) }

    /// Closes with `code` and waits until the connection is gone.
    public func close(code: UInt16, reason: String) async {
        await connection.close(code: code, reason: reason)
        release.fire()
        _ = await scope.value
    }

    /// Drops the connection without a closing handshake.
    public func abort() {
        connection.abort()
        release.fire()
    }

    /// How the connection ended, once it has.
    public var closeInfo: WebSocketCloseInfo {
        get async { await scope.value }
    }
}
