import Foundation
import NIOHTTP1
import SubscriberCore
import Testing

/// Smoke tests of ``NIOWebSocketConnector`` (WSClient) against a scripted NIO WebSocket server on a real socket.
@Suite("NIOWebSocketConnector on a real socket")
struct NIOWebSocketConnectorTests {
    private let connector = NIOWebSocketConnector(closeTimeout: .seconds(2))

    // MARK: Upgrade request

    @Test("offers exactly the given subprotocols and headers in the upgrade request")
    func offersSubprotocolsAndHeaders() async throws {
        try await withServer(.init(selectedSubprotocol: "aws-appsync-event-ws")) { server in
            let subprotocols = [
                "aws-appsync-event-ws",
                "header-eyJob3N0IjoiZXhhbXBsZS5hcHBzeW5jLWFwaS51cy1lYXN0LTEuYW1hem9uYXdzLmNvbSIsIngtYXBpLWtleSI6ImRhMi1rZXkifQ",
            ]
            let request = WebSocketRequest(
                url: server.url,
                subprotocols: subprotocols,
                headers: [
                    HTTPHeaderField(name: "X-Api-Key", value: "da2-key"),
                    HTTPHeaderField(name: "X-Trace", value: "trace-1"),
                ]
            )
            let connection = try await connect(request)
            let headers = try await server.waitForUpgradeRequest()

            #expect(headers["Sec-WebSocket-Protocol"] == [subprotocols.joined(separator: ", ")])
            let offered = headers["Sec-WebSocket-Protocol"]
                .flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(offered == subprotocols)
            #expect(headers["X-Api-Key"] == ["da2-key"])
            #expect(headers["X-Trace"] == ["trace-1"])
            #expect(headers["Host"] == ["127.0.0.1:\(server.port)"])
            // WSClient does not expose the upgrade response, so the server's choice cannot be verified.
            #expect(connection.negotiatedSubprotocol == nil)
            await close(connection)
        }
    }

    @Test("a URL that is not ws or wss is rejected before connecting")
    func rejectsNonWebSocketURL() async throws {
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connect(WebSocketRequest(url: URL(string: "https://127.0.0.1:1/path?token=secret")!))
        }
        guard case .invalidURL(let detail)? = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
        #expect(!detail.contains("secret"))
    }

    // MARK: Messages

    @Test("text frames round-trip both ways in order")
    func textFramesRoundTrip() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            for text in ["one", "two", "three"] {
                try await connection.send(.text(text))
            }
            #expect(try await server.waitForTexts(3) == ["one", "two", "three"])

            for text in ["alpha", "beta", "gamma"] {
                try await server.send(text: text)
            }
            #expect(try await receive(connection) == .message(.text("alpha")))
            #expect(try await receive(connection) == .message(.text("beta")))
            #expect(try await receive(connection) == .message(.text("gamma")))
            await close(connection)
        }
    }

    @Test("binary frames round-trip both ways")
    func binaryFramesRoundTrip() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            try await connection.send(.binary(Data([0, 1, 2, 255])))
            _ = try await withSmokeTimeout(10, "a binary message") {
                while server.receivedBinaries.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
            }
            #expect(server.receivedBinaries == [[0, 1, 2, 255]])

            try await server.send(binary: [9, 8, 7])
            #expect(try await receive(connection) == .message(.binary(Data([9, 8, 7]))))
            await close(connection)
        }
    }

    @Test("messages larger than WSClient's 16 KiB default frame size pass both ways")
    func largeMessagesPass() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            let big = String(repeating: "0123456789", count: 30_000)  // 300 KB, above AppSync's 240 KB event limit
            try await server.send(text: big)
            #expect(try await receive(connection) == .message(.text(big)))

            try await connection.send(.text(big))
            #expect(try await server.waitForTexts(1) == [big])
            await close(connection)
        }
    }

    @Test("a frame above maxFrameSize ends the connection instead of hanging")
    func oversizedFrameEndsConnection() async throws {
        try await withServer { server in
            let small = NIOWebSocketConnector(maxFrameSize: 1024, maxMessageSize: 1024, closeTimeout: .seconds(2))
            let connection = try await connect(WebSocketRequest(url: server.url), with: small)
            try await server.send(text: String(repeating: "x", count: 4096))
            let event = try await receive(connection)
            guard case .closed(let info) = event else {
                Issue.record("expected the connection to end, got \(event)")
                return
            }
            #expect(!info.initiatedLocally)
            #expect(try await receive(connection) == event)
            // NIO's frame decoder refuses the frame and tells the server why.
            #expect(try await server.waitForClientClose().code == 1009)
        }
    }

    @Test("fragmented messages arrive joined")
    func fragmentedMessagesAreJoined() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            try await server.send(fragments: ["{\"type\":", "\"data\",", "\"id\":1}"])
            try await server.send(text: "next")
            #expect(try await receive(connection) == .message(.text("{\"type\":\"data\",\"id\":1}")))
            #expect(try await receive(connection) == .message(.text("next")))
            await close(connection)
        }
    }

    @Test("a fragmented message above maxMessageSize ends the connection with 1009")
    func oversizedMessageEndsConnection() async throws {
        try await withServer { server in
            let small = NIOWebSocketConnector(maxFrameSize: 1024, maxMessageSize: 2048, closeTimeout: .seconds(2))
            let connection = try await connect(WebSocketRequest(url: server.url), with: small)
            let chunk = String(repeating: "y", count: 1000)
            try await server.send(fragments: [chunk, chunk, chunk])
            let event = try await receive(connection)
            guard case .closed(let info) = event else {
                Issue.record("expected the connection to end, got \(event)")
                return
            }
            #expect(info.code == nil)
            #expect(info.reason.contains("too large"))
            #expect(!info.initiatedLocally)
            #expect(try await server.waitForClientClose().code == 1009)
        }
    }

    @Test("server pings are answered with a pong and never surface in receive()")
    func pingsAreAnswered() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            try await server.sendPing([1, 2, 3, 4])
            try await server.send(text: "after-ping")
            #expect(try await receive(connection) == .message(.text("after-ping")))
            #expect(try await server.waitForPong() == [1, 2, 3, 4])
            await close(connection)
        }
    }

    // MARK: Close

    @Test("a server close with 4403 surfaces as a remote close, repeatedly")
    func serverCloseSurfaces() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            try await server.sendClose(code: 4403, reason: "Forbidden")

            let expected = WebSocketInboundEvent.closed(WebSocketCloseInfo(code: 4403, reason: "Forbidden", initiatedLocally: false))
            #expect(try await receive(connection) == expected)
            #expect(try await receive(connection) == expected)
            #expect(try await receive(connection) == expected)
            // WSClient answers a private-use code with a normal close.
            #expect(try await server.waitForClientClose() == .init(code: 1000, reason: ""))
            try await server.waitForDisconnect()
            await #expect(throws: WebSocketSeamError.notConnected) {
                try await connection.send(.text("too late"))
            }
        }
    }

    @Test("a local close yields a local .closed and send then throws notConnected")
    func localClose() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            let started = ContinuousClock.now
            await close(connection, code: 1000, reason: "bye")
            // The server answers at once, so the handshake must not sit out the 2 s close timeout.
            #expect(ContinuousClock.now - started < .seconds(1.5))

            #expect(try await server.waitForClientClose() == .init(code: 1000, reason: "bye"))
            let expected = WebSocketInboundEvent.closed(WebSocketCloseInfo(code: 1000, reason: "bye", initiatedLocally: true))
            #expect(try await receive(connection) == expected)
            #expect(try await receive(connection) == expected)
            await #expect(throws: WebSocketSeamError.notConnected) {
                try await connection.send(.text("after close"))
            }
            try await server.waitForDisconnect()
        }
    }

    @Test("a local close ends a receive() that is already waiting")
    func localCloseEndsPendingReceive() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            let pending = Task { await connection.receive() }
            try await Task.sleep(for: .milliseconds(50))
            await close(connection, code: 4001, reason: "switching region")

            let event = try await withSmokeTimeout(10, "the pending receive()") { await pending.value }
            #expect(event == .closed(WebSocketCloseInfo(code: 4001, reason: "switching region", initiatedLocally: true)))
            #expect(try await server.waitForClientClose() == .init(code: 4001, reason: "switching region"))
        }
    }

    @Test("a local close does not hang when the server never answers it", arguments: [false, true])
    func localCloseWithSilentServer(receivePending: Bool) async throws {
        try await withServer(.init(answersClose: false)) { server in
            let quick = NIOWebSocketConnector(closeTimeout: .milliseconds(300))
            let connection = try await connect(WebSocketRequest(url: server.url), with: quick)
            let pending = receivePending ? Task { await connection.receive() } : nil
            if receivePending { try await Task.sleep(for: .milliseconds(50)) }

            let started = ContinuousClock.now
            await close(connection, code: 1000, reason: "bye")
            #expect(ContinuousClock.now - started < .seconds(5))

            let expected = WebSocketInboundEvent.closed(WebSocketCloseInfo(code: 1000, reason: "bye", initiatedLocally: true))
            if let pending {
                #expect(try await withSmokeTimeout(10, "the pending receive()") { await pending.value } == expected)
            }
            #expect(try await receive(connection) == expected)
            #expect(try await server.waitForClientClose() == .init(code: 1000, reason: "bye"))
        }
    }

    @Test("cancelling a waiting receive() ends the connection as a local close")
    func cancellingReceiveEndsConnection() async throws {
        try await withServer { server in
            let connection = try await connect(WebSocketRequest(url: server.url))
            let pending = Task { await connection.receive() }
            try await Task.sleep(for: .milliseconds(50))
            pending.cancel()

            let event = try await withSmokeTimeout(10, "the cancelled receive()") { await pending.value }
            let expected = WebSocketInboundEvent.closed(
                WebSocketCloseInfo(code: 1000, reason: "receive() was cancelled", initiatedLocally: true)
            )
            #expect(event == expected)
            #expect(try await receive(connection) == expected)
            #expect(try await server.waitForClientClose().code == 1000)
        }
    }

    @Test("dropping the connection without close() closes it normally")
    func droppingTheConnectionClosesIt() async throws {
        try await withServer { server in
            var connection: (any WebSocketConnection)? = try await connect(WebSocketRequest(url: server.url))
            #expect(connection != nil)
            connection = nil
            #expect(try await server.waitForClientClose().code == 1000)
            try await server.waitForDisconnect()
        }
    }

    // MARK: Failures

    @Test("connecting to a port nobody listens on throws connectionFailed")
    func connectionRefused() async throws {
        // Port 1 on loopback has no listener. (A port freed by a stopped server can be taken at once by another
        // test's server running in parallel, which made this test flaky.)
        let url = try #require(URL(string: "ws://127.0.0.1:1/"))

        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connect(WebSocketRequest(url: url))
        }
        guard case .connectionFailed(let detail)? = error else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
            return
        }
        #expect(!detail.isEmpty)
    }

    @Test("an upgrade answered with an HTTP error throws upgradeRejected", arguments: [HTTPResponseStatus.notFound, .unauthorized])
    func upgradeRejected(status: HTTPResponseStatus) async throws {
        try await withServer(.init(rejectUpgradeWith: status)) { server in
            let error = await #expect(throws: WebSocketSeamError.self) {
                _ = try await connect(WebSocketRequest(url: server.url, subprotocols: ["aws-appsync-event-ws"]))
            }
            // WSClient reports "upgrade failed" without the status code, so only the case can be checked.
            guard case .upgradeRejected? = error else {
                Issue.record("expected upgradeRejected, got \(String(describing: error))")
                return
            }
            let headers = try await server.waitForUpgradeRequest()
            #expect(headers["Sec-WebSocket-Protocol"] == ["aws-appsync-event-ws"])
        }
    }

    @Test("cancelling connect() while the server stalls the upgrade throws CancellationError promptly")
    func cancellingConnect() async throws {
        try await withServer(.init(silentUpgrade: true)) { server in
            let connector = connector
            let attempt = Task { try await connector.connect(WebSocketRequest(url: server.url)) }
            try await Task.sleep(for: .milliseconds(100))
            attempt.cancel()
            let outcome = try await withSmokeTimeout(10, "the cancelled connect") { await attempt.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }

    // MARK: Helpers

    private func withServer(
        _ options: ScriptedNIOWebSocketServer.Options = .init(),
        _ body: (ScriptedNIOWebSocketServer) async throws -> Void
    ) async throws {
        let server = try await ScriptedNIOWebSocketServer.start(options)
        do {
            try await body(server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    private func connect(
        _ request: WebSocketRequest,
        with connector: NIOWebSocketConnector? = nil
    ) async throws -> any WebSocketConnection {
        let connector = connector ?? self.connector
        return try await withSmokeTimeout(10, "connect") { try await connector.connect(request) }
    }

    private func receive(_ connection: any WebSocketConnection) async throws -> WebSocketInboundEvent {
        try await withSmokeTimeout(10, "receive()") { await connection.receive() }
    }

    private func close(_ connection: any WebSocketConnection, code: UInt16 = 1000, reason: String = "") async {
        do {
            try await withSmokeTimeout(10, "close()") { await connection.close(code: code, reason: reason) }
        } catch {
            Issue.record("close() did not return: \(error)")
        }
    }
}
