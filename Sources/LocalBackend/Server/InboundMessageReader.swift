import HummingbirdWebSocket
import NIOCore

/// Reassembles WebSocket messages from frames with a size limit that answers instead of closing: a message over the
/// limit is read to its end, discarded and reported as ``Message/oversized(_:)``, and the connection goes on.
enum InboundMessageReader {
    /// One complete inbound message.
    enum Message: Sendable, Equatable {
        /// A text (or binary, read as UTF-8) message.
        case text(String)
        /// A message longer than the limit, with its length.
        case oversized(Int)
    }

    /// Reads messages until the peer closes; `handle` runs for each, in order, before the next is read.
    static func read(_ inbound: WebSocketInboundStream, maxBytes: Int, _ handle: (Message) async -> Void) async throws {
        var iterator = inbound.makeAsyncIterator()
        var buffer = ByteBuffer()
        var size = 0
        var collecting = false
        while let frame = try await iterator.next() {
            switch frame.opcode {
            case .text, .binary:
                buffer.clear()
                size = 0
                collecting = true
            case .continuation:
                guard collecting else { continue }
            }
            size += frame.data.readableBytes
            if size <= maxBytes {
                var data = frame.data
                buffer.writeBuffer(&data)
            } else {
                buffer.clear()
            }
            guard frame.fin else { continue }
            collecting = false
            if size > maxBytes {
                await handle(.oversized(size))
            } else {
                await handle(.text(String(buffer: buffer)))
            }
            buffer.clear()
        }
    }
}
