import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import WSClient

/// A connection opened by ``NIOWebSocketConnector``.
///
/// Owns the task running WSClient. Dropping the last reference without ``close(code:reason:)`` ends the connection
/// with a normal close (1000); the task is cancelled if that handshake does not finish within the close timeout.
final class NIOWebSocketConnection: WebSocketConnection {
    private let session: NIOWebSocketSession
    private let runTask: Task<Void, Never>
    private let closeTimeout: Duration

    init(session: NIOWebSocketSession, runTask: Task<Void, Never>, closeTimeout: Duration) {
        self.session = session
        self.runTask = runTask
        self.closeTimeout = closeTimeout
    }

    deinit {
        // Cancelling right away would make WSClient drop the socket without a close frame (its cancellation
        // handler shuts the input and writes fail), so let the handler return normally first.
        session.connectionDropped(runTask: runTask, deadline: closeTimeout + .seconds(1))
    }

    /// Always `nil`: WSClient does not expose the upgrade response, so the server's choice cannot be verified.
    var negotiatedSubprotocol: String? { nil }

    /// The next message, read from the socket only now (no read-ahead in this layer).
    ///
    /// Cancelling a waiting `receive()` ends the connection: NIO finishes the inbound stream when its reader is
    /// cancelled. WSClient then closes with 1000 and `receive()` reports a local close.
    func receive() async -> WebSocketInboundEvent {
        await session.receive()
    }

    /// Sends a text or binary message; throws ``WebSocketSeamError/notConnected`` once closing has begun.
    func send(_ message: WebSocketMessage) async throws {
        try await session.send(message)
    }

    /// Sends a close frame and waits for the close handshake, at most about `closeTimeout`.
    func close(code: UInt16, reason: String) async {
        let session = session
        let runTask = runTask
        let closeTimeout = closeTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await session.close(code: code, reason: reason)
            }
            // Backstop: WSClient's own close timeout only starts once our handler has returned, and a silent
            // server (or a hung TLS shutdown) must not keep the caller waiting. Woken early when the close is done
            // (group cancelled) or when the caller is cancelled.
            group.addTask {
                try? await Task.sleep(for: closeTimeout)
                guard !session.isFinished else { return }
                session.logger.debug("WebSocket close handshake did not finish in time; dropping the connection")
                runTask.cancel()
                session.finishLocally()
            }
            _ = await group.next()
            group.cancelAll()
        }
    }
}
