import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The ordered outgoing side of one WebSocket, shared by both protocols.
///
/// Anyone may queue frames without waiting (fan-out never blocks on a slow socket); one writer task (``run(writer:
/// faults:channel:logger:)``) writes them in order, applying the ``FaultInjector``'s frame delay and data-frame drops.
/// Large messages are fragmented into 16 KiB frames, which every client's default frame limit accepts.
final class WebSocketOutbox: Sendable {
    /// The largest frame written; longer messages continue in further frames.
    static let fragmentSize = 16 * 1024

    private enum Item: Sendable {
        case text(String, isData: Bool)
        case close(code: UInt16, reason: String)
    }

    private let stream: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Item>.makeStream()
    }

    /// Queues a text message. `isData` marks event deliveries, which the `dropFrames` fault may drop.
    func send(_ text: String, isData: Bool = false) {
        continuation.yield(.text(text, isData: isData))
    }

    /// Queues a close with `code` after the frames already queued; nothing queued later is written.
    func close(code: UInt16, reason: String) {
        continuation.yield(.close(code: code, reason: reason))
    }

    /// Ends the queue; the writer returns once it has written what was queued.
    func finish() { continuation.finish() }

    /// Writes queued items until a close was sent, the queue ends or the socket fails. After sending a close it waits
    /// up to `closeTimeout` for the peer to answer, then drops the TCP connection.
    func run(
        writer: WebSocketOutboundWriter, faults: FaultInjector, channel: any Channel, logger: Logger, closeTimeout: Duration = .seconds(3)
    )
        async
    {
        for await item in stream {
            switch item {
            case .text(let text, let isData):
                if isData && faults.consumeDataFrameDrop() {
                    logger.debug("dropped an outgoing data frame (fault injection)")
                    continue
                }
                let delay = faults.frameDelay
                if delay > .zero {
                    do { try await Task.sleep(for: delay) } catch { return }
                }
                do {
                    try await Self.write(text, to: writer)
                } catch {
                    logger.debug("write failed; the socket is closing", metadata: ["error": "\(error)"])
                    return
                }
            case .close(let code, let reason):
                do {
                    try await writer.close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason)
                } catch {
                    logger.debug("close not sent", metadata: ["error": "\(error)"])
                }
                do { try await Task.sleep(for: closeTimeout) } catch { return }
                logger.debug("peer did not answer the close; dropping the connection")
                channel.close(promise: nil)
                return
            }
        }
    }

    private static func write(_ text: String, to writer: WebSocketOutboundWriter) async throws {
        guard text.utf8.count > fragmentSize else {
            try await writer.write(.text(text))
            return
        }
        var buffer = ByteBuffer(string: text)
        try await writer.withTextMessageWriter { message in
            while buffer.readableBytes > 0, let slice = buffer.readSlice(length: min(fragmentSize, buffer.readableBytes)) {
                try await message(slice)
            }
        }
    }
}
