import Foundation
import NIOCore
import RealtimeTesting
import SubscriberCore
import Testing

@testable import WebSocketNIO

/// Flow control of ``NIOWebSocketConnector`` on a real socket, watched from inside the connection: reading from the
/// socket pauses for a reader that falls behind (by messages and by bytes) and resumes once it catches up, and a ping
/// flood cannot grow the send queue. Waits are for events (a flag, a count), never for time to pass.
@Suite("NIOWebSocketConnector flow control")
struct NIOWebSocketFlowTests {
    private let connector = NIOWebSocketConnector(closeTimeout: .seconds(2))
    /// How long a wait for the pause or the resume may take before the test fails: short, so a broken pause fails fast.
    private let eventWait = 10.0

    @Test("a reader that falls behind pauses reading at 256 messages and resumes it: every message arrives, in order")
    func backpressurePausesAndResumes() async throws {
        // About 1.1 KB a message: one read (at most 4 × 64 KiB) completes fewer than 256, so the pause shows.
        let padding = String(repeating: "x", count: 1_100)
        let text = { @Sendable (index: Int) in "m\(index)" + padding }
        try await withServer { server in
            let ((sent, received), _) = try await scoped(server) { connection in
                let nio = try #require(connection as? NIOWebSocketConnection)
                // The reader takes nothing yet; the server writes until the socket takes no more.
                let sent = try await server.sendUntilBackedUp(minimum: 2 * WebSocketInbound.highWatermark, limit: 50_000, text)
                #expect(sent < 50_000, "the server's writes never backed up: the client kept reading")
                try await waitUntil("reading to pause", timeout: eventWait) { nio.inboundBacklog.paused }
                #expect(try await nio.readsFromSocket() == false)
                let held = nio.inboundBacklog.messages
                #expect(held >= WebSocketInbound.highWatermark && held < 2 * WebSocketInbound.highWatermark, "\(held)")
                #expect(held < sent)
                // Nothing was read while paused: the first batch is exactly the queue.
                var received = try #require(try await connection.receiveBatch())
                #expect(received.count == held)
                // Taking the queue turns reading back on.
                try await waitUntil("reading to resume", timeout: eventWait) { nio.inboundBacklog.messages > 0 }
                while received.count < sent, let batch = try await connection.receiveBatch() { received += batch }
                return (sent, received)
            }
            #expect(received == (0..<sent).map { .text(text($0)) })
        }
    }

    @Test("large messages pause reading by bytes, long before 256 wait: at most 4 MiB, a read and a message")
    func backpressureCountsBytes() async throws {
        let count = 24
        let big = String(repeating: "y", count: 512 * 1024)
        let text = { @Sendable (index: Int) in "b\(index)" + big }
        try await withServer { server in
            let (received, _) = try await scoped(server) { connection in
                let nio = try #require(connection as? NIOWebSocketConnection)
                // 12 MB the reader does not take: counted in messages, all 24 would be read.
                _ = try await server.sendUntilBackedUp(minimum: count, limit: count, text)  // all 24, at once
                try await waitUntil("reading to pause", timeout: eventWait) { nio.inboundBacklog.paused }
                #expect(try await nio.readsFromSocket() == false)
                let backlog = nio.inboundBacklog
                #expect(backlog.messages < count)
                #expect(backlog.bytes >= WebSocketInbound.highWatermarkBytes)
                #expect(backlog.bytes <= WebSocketInbound.highWatermarkBytes + 256 * 1024 + connector.maxMessageSize)
                var received = try #require(try await connection.receiveBatch())
                #expect(received.count == backlog.messages)
                try await waitUntil("reading to resume", timeout: eventWait) { nio.inboundBacklog.messages > 0 }
                while received.count < count, let batch = try await connection.receiveBatch() { received += batch }
                return received
            }
            #expect(received == (0..<count).map { .text(text($0)) })
        }
    }

    @Test("a ping flood from a server that reads nothing: the send queue stays at NIO's high watermark; the latest ping is answered")
    func pingFloodIsBounded() async throws {
        let round = 5_000  // 655 KB of pongs
        let payload = { @Sendable (index: Int) -> [UInt8] in
            withUnsafeBytes(of: UInt32(index).bigEndian, Array.init) + [UInt8](repeating: 0x5A, count: 121)
        }
        try await withServer { server in
            let ((sent, buffered, pongs), _) = try await scoped(server) { connection in
                let nio = try #require(connection as? NIOWebSocketConnection)
                try await server.readClient(false)
                var sent = 0
                /// A round of pings; frames are handled in order, so every ping is answered or held once the marker arrives.
                func flood() async throws -> Int {
                    let base = sent
                    try await server.sendPings(round) { payload(base + $0) }
                    sent += round
                    try await server.send(text: "marker \(sent)")
                    #expect(try await connection.receive() == .text("marker \(sent)"))
                    return try await nio.bufferedOutboundBytes()
                }
                // Until the socket takes no more pongs (the kernel's buffers, several MB on Linux, are full)…
                while try await flood() == 0, sent < 200_000 {}
                // …and a round past that point, which NIO would otherwise queue whole.
                let buffered = try await flood()
                try await server.readClient(true)
                return (sent, buffered, try await server.waitForLastPong(payload(sent - 1)))
            }
            #expect(sent < 200_000, "the socket never stopped taking pongs")
            // NIO turns the channel unwritable past 64 KiB queued; the pong that crossed the line is the last queued.
            #expect(buffered <= 64 * 1024 + 131, "\(buffered) bytes queued")
            #expect(pongs < sent)
        }
    }

    /// Runs `body` in a connection scope to `server`, failing instead of hanging.
    private func scoped<Value: Sendable>(
        _ server: ScriptedNIOWebSocketServer, _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> (Value, WebSocketCloseInfo) {
        let (connector, request) = (connector, WebSocketRequest(url: server.url))
        let result = try await withSmokeTimeout(60, "the connection scope") { try await connector.withConnection(request, body) }
        return (result.value, result.close)
    }
}
