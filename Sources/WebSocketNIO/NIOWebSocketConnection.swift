import Foundation
import NIOCore
import NIOWebSocket
import SubscriberCore
import WSClient

/// The connection ``NIOWebSocketConnector`` hands to a scope: WSClient's inbound stream and outbound writer, alive
/// exactly as long as the scope's closure.
final class NIOWebSocketConnection: WebSocketConnection {
    private let inbound: WebSocketInboundStream
    private let outbound: WebSocketOutboundWriter
    private let maxMessageSize: Int
    private let closedLocally: Locked<Bool>
    private let abortSignal: OneShotSignal<Void>
    /// Fired when WSClient sent a close on its own (a protocol violation by the server): the link is over.
    private let unrequestedClose: OneShotSignal<UInt16>
    /// The single iterator, checked out while a `receive()` awaits it (single consumer by the seam's contract).
    private let iterator: Locked<WebSocketInboundStream.AsyncIterator?>

    init(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, maxMessageSize: Int,
        closedLocally: Locked<Bool>, unrequestedClose: OneShotSignal<UInt16>, abort: OneShotSignal<Void>
    ) {
        self.unrequestedClose = unrequestedClose
        self.inbound = inbound
        self.outbound = outbound
        self.maxMessageSize = maxMessageSize
        self.closedLocally = closedLocally
        self.abortSignal = abort
        self.iterator = Locked(inbound.makeAsyncIterator())
    }

    /// Always `nil`: WSClient does not expose the upgrade response, so the server's choice cannot be verified.
    var negotiatedSubprotocol: String? { nil }

    func receive() async throws -> SubscriberCore.WebSocketMessage? {
        guard !abortSignal.isFired, !unrequestedClose.isFired,
            var local = iterator.withLock({ state -> WebSocketInboundStream.AsyncIterator? in
                defer { state = nil }
                return state
            })
        else { return nil }
        let message: WSClient.WebSocketMessage?
        do {
            message = try await local.nextMessage(maxSize: maxMessageSize)
        } catch  where unrequestedClose.isFired {
            return nil
        }
        iterator.withLock { $0 = local }
        // Frames WSClient still reads after failing the connection are not delivered: the link has ended. A server that
        // goes silent instead leaves this call waiting, like any silent server: the engine's liveness timers end it.
        if unrequestedClose.isFired { return nil }
        switch message {
        case .text(let text)?: return .text(text)
        case .binary(let buffer)?: return .binary(Data(buffer.readableBytesView))
        case nil: return nil
        }
    }

    func send(_ message: SubscriberCore.WebSocketMessage) async throws {
        guard !abortSignal.isFired else { throw WebSocketSeamError.notConnected }
        do {
            // These split messages larger than maxFrameSize into continuation frames.
            switch message {
            case .text(let text): try await outbound.writeTextMessage(text)
            case .binary(let data): try await outbound.writeBinaryMessage(ByteBuffer(bytes: data))
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw WebSocketSeamError.notConnected
        }
    }

    func close(code: UInt16, reason: String) async {
        closedLocally.withLock { $0 = true }
        // The transport may already be gone; the scope ends either way.
        try? await outbound.close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason.isEmpty ? nil : reason)
    }

    func abort() {
        closedLocally.withLock { $0 = true }
        abortSignal.fire()
    }
}
