import Foundation
import NIOCore
import NIOTestServer
import RealtimeTesting
import SubscriberCore
import Testing
import WebSocketNIO

/// How a scope of ``NIOWebSocketConnector`` ends when the peer does not cooperate, or the settings are extreme.
@Suite("NIOWebSocketConnector scope ends")
struct NIOWebSocketScopeEndTests {
    @Test("cancelling a scope whose send waits on a peer that stopped reading ends it: the send throws, the scope returns")
    func cancelEndsASendIntoAFullBuffer() async throws {
        // Upgrades, then never reads again: the client's sends fill the server's receive buffer and its own send buffer.
        var behaviour = NIOWebSocketTestServer.Behaviour { channel, _ in
            try channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        }
        behaviour.accepted = { channel, _ in
            try channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_rcvbuf), value: 4096)
        }
        let server = try await NIOWebSocketTestServer.start(behaviour)
        do {
            try await cancelWhileSending(to: server)
        } catch {
            await server.shutdown()  // the connection's end fails a stuck write, so the scope's task ends too
            throw error
        }
        await server.shutdown()
    }

    private func cancelWhileSending(to server: NIOWebSocketTestServer) async throws {
        let connector = NIOWebSocketConnector(closeTimeout: .milliseconds(200))
        let sends = Locked((started: 0, finished: 0))
        let scope = Task {
            try await connector.withConnection(WebSocketRequest(url: server.url)) { connection in
                let message = WebSocketMessage.binary(Data(repeating: 0x5A, count: 1 << 20))
                while true {
                    sends.withLock { $0.started += 1 }
                    try await connection.send(message)
                    sends.withLock { $0.finished += 1 }
                }
            }
        }
        // A send is stuck once one has started and none finished for a while (the buffers hold a few MiB at most).
        try await withTestTimeout(30, "a send to wait for the full buffer") {
            var stuckSince: ContinuousClock.Instant?
            while true {
                let (started, finished) = sends.withLock { ($0.started, $0.finished) }
                if started > finished {
                    let since = stuckSince ?? .now
                    stuckSince = since
                    if since.duration(to: .now) > .milliseconds(300) { return }
                } else {
                    stuckSince = nil
                }
                try await TestTime.pollPause()
            }
        }
        scope.cancel()
        let ended = try await withTestTimeout(10, "the cancelled scope to return") { await scope.result }
        #expect(throws: CancellationError.self) { try ended.get() }
    }

    @Test("a close timeout too long for nanoseconds in an Int64 is clamped: the scope opens and closes")
    func hugeCloseTimeout() async throws {
        try await withServer { server in
            let connector = NIOWebSocketConnector(closeTimeout: .seconds(Int64.max))
            let result = try await withSmokeTimeout(10, "the scope") {
                try await connector.withConnection(WebSocketRequest(url: server.url)) { connection in
                    try await connection.send(.text("hello"))
                }
            }
            #expect(result.close.code == 1000)
            #expect(try await server.waitForTexts(1) == ["hello"])
        }
    }
}
