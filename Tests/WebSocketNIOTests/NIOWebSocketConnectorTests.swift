import Foundation
import NIOCore
import NIOHTTP1
import NIOTestServer
import NIOWebSocket
import SubscriberCore
import Testing
import WebSocketNIO

/// Tests of ``NIOWebSocketConnector`` against a scripted NIO WebSocket server on a real socket.
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
            let (subprotocol, _) = try await scoped(request) { connection in connection.negotiatedSubprotocol }
            let headers = try await server.waitForUpgradeRequest()

            #expect(headers["Sec-WebSocket-Protocol"] == [subprotocols.joined(separator: ", ")])
            let offered = headers["Sec-WebSocket-Protocol"]
                .flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(offered == subprotocols)
            #expect(headers["X-Api-Key"] == ["da2-key"])
            #expect(headers["X-Trace"] == ["trace-1"])
            #expect(headers["Host"] == ["127.0.0.1:\(server.port)"])
            // The server's choice, read from the 101 response.
            #expect(subprotocol == "aws-appsync-event-ws")
        }
    }

    @Test(
        "a server that did not select the required subprotocol fails the connection, naming both; the scope never runs",
        arguments: ["graphql-ws", nil] as [String?])
    func requiredSubprotocolNotSelected(selected: String?) async throws {
        try await withServer(.init(selectedSubprotocol: selected)) { server in
            let ran = Locked(false)
            let request = WebSocketRequest(
                url: server.url, subprotocols: ["graphql-transport-ws", "graphql-ws"], requiredSubprotocol: "graphql-transport-ws")
            let error = await #expect(throws: WebSocketSeamError.self) {
                _ = try await connector.withConnection(request) { _ in ran.withLock { $0 = true } }
            }
            #expect(error == .subprotocolNotSelected(required: "graphql-transport-ws", selected: selected))
            #expect(error?.description.contains(selected ?? "none") == true)
            #expect(!ran.withLock { $0 })
        }
    }

    @Test("a URL that is not ws or wss is rejected before connecting")
    func rejectsNonWebSocketURL() async throws {
        let error = await #expect(throws: WebSocketSeamError.self) {
            try await connect(WebSocketRequest(url: URL(string: "https://127.0.0.1:1/path?token=secret")!))
        }
        guard case .invalidURL(let detail)? = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
        #expect(!detail.contains("secret"))
    }

    @Test(
        "a port outside 1–65535 is rejected before connecting (Foundation parses it; the resolver would wrap it)",
        arguments: ["ws://127.0.0.1:70000/x", "ws://127.0.0.1:0/x", "wss://example.com:99999999999/x"])
    func rejectsPortOutOfRange(url: String) async throws {
        let error = await #expect(throws: WebSocketSeamError.self) {
            try await connect(WebSocketRequest(url: URL(string: url)!))
        }
        guard case .invalidURL(let detail)? = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("is not 1–65535"))
    }

    // MARK: Messages (inside the scope)

    @Test("text and binary frames round-trip both ways in order")
    func framesRoundTrip() async throws {
        try await withServer { server in
            let (received, _) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                for text in ["one", "two", "three"] { try await connection.send(.text(text)) }
                try await connection.send(.binary(Data([0, 1, 2, 255])))
                #expect(try await server.waitForTexts(3) == ["one", "two", "three"])
                for text in ["alpha", "beta"] { try await server.send(text: text) }
                try await server.send(binary: [9, 8, 7])
                return [try await connection.receive(), try await connection.receive(), try await connection.receive()]
            }
            #expect(received == [.text("alpha"), .text("beta"), .binary(Data([9, 8, 7]))])
            #expect(server.receivedBinaries == [[0, 1, 2, 255]])
        }
    }

    @Test("non-ASCII text arrives intact; text that is not UTF-8 ends reading and the server learns why (1007)")
    func textIsValidatedAsUTF8() async throws {
        try await withServer { server in
            let text = "été ✓ 😀 {\"thingName\":\"cam-ü\"}"
            let ((first, ended), _) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                try await server.send(text: text)
                let first = try await connection.receive()
                try await server.send(frame: WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: [0x7B, 0xFF, 0xFE, 0x7D])))
                let ended: Bool
                do { ended = try await connection.receive() == nil } catch { ended = true }
                return (first, ended)
            }
            #expect(first == .text(text))
            #expect(ended)
            #expect(try await server.waitForClientClose().code == 1007)
        }
    }

    @Test("messages larger than 16 KiB pass both ways; fragments arrive joined")
    func largeAndFragmentedMessages() async throws {
        try await withServer { server in
            let big = String(repeating: "0123456789", count: 30_000)  // 300 KB, above AppSync's 240 KB event limit
            let (received, _) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                try await server.send(text: big)
                try await server.send(fragments: ["{\"type\":", "\"data\",", "\"id\":1}"])
                try await connection.send(.text(big))
                return [try await connection.receive(), try await connection.receive()]
            }
            #expect(received == [.text(big), .text("{\"type\":\"data\",\"id\":1}")])
            #expect(try await server.waitForTexts(1) == [big])
        }
    }

    @Test("a frame above maxFrameSize ends reading instead of hanging, and the server learns why (1009)")
    func oversizedFrameEndsConnection() async throws {
        try await withServer { server in
            let small = NIOWebSocketConnector(maxFrameSize: 1024, maxMessageSize: 1024, closeTimeout: .seconds(2))
            let (ended, _) = try await scoped(WebSocketRequest(url: server.url), with: small) { connection in
                try await server.send(text: String(repeating: "x", count: 4096))
                do { return try await connection.receive() == nil } catch { return true }
            }
            #expect(ended)
            #expect(try await server.waitForClientClose().code == 1009)
        }
    }

    @Test("server pings are answered with a pong and never surface in receive()")
    func pingsAreAnswered() async throws {
        try await withServer { server in
            let (received, _) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                try await server.sendPing([1, 2, 3, 4])
                try await server.send(text: "after-ping")
                return try await connection.receive()
            }
            #expect(received == .text("after-ping"))
            #expect(try await server.waitForPong() == [1, 2, 3, 4])
        }
    }

    @Test("the client's ping goes out as an empty ping frame; its pong reaches the pong handler, never receive()")
    func clientPingReportsPong() async throws {
        try await withServer { server in
            let (received, _) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                let pong = OneShotSignal<Void>()
                connection.onPong { pong.fire() }
                #expect(connection.sendPing())
                _ = await pong.wait()
                try await server.send(text: "after-pong")
                return try await connection.receive()
            }
            #expect(received == .text("after-pong"))
            #expect(server.receivedPings == [[]])
        }
    }

    @Test("a server that ignores pings: no pong is reported; an unsolicited pong is, before the frames behind it")
    func ignoredPingsAndUnsolicitedPongs() async throws {
        try await withServer(.init(answersPings: false)) { server in
            let pongs = Locked(0)
            let (counts, _) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                connection.onPong { pongs.withLock { $0 += 1 } }
                #expect(connection.sendPing())
                _ = try await server.waitForPings(1)
                try await server.send(text: "marker")
                _ = try await connection.receive()
                let unanswered = pongs.withLock { $0 }
                try await server.send(frame: WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer()))
                try await server.send(text: "after-pong")
                _ = try await connection.receive()
                return (unanswered, pongs.withLock { $0 })
            }
            #expect(counts.0 == 0, "an ignored ping reports nothing")
            #expect(counts.1 == 1, "the unsolicited pong was reported before the frame behind it was read")
        }
    }

    // MARK: Ending the scope

    @Test("a server close ends receive() and surfaces its code in the scope's result")
    func serverCloseSurfaces() async throws {
        try await withServer { server in
            let (received, close) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                try await server.sendClose(code: 4403, reason: "Forbidden")
                return try await connection.receive()
            }
            #expect(received == nil)
            #expect(close.code == 4403 && close.reason == "Forbidden" && !close.initiatedLocally)
            try await server.waitForDisconnect()
        }
    }

    @Test("a local close ends the scope with that code")
    func localClose() async throws {
        try await withServer { server in
            let (_, close) = try await scoped(WebSocketRequest(url: server.url)) { connection in
                await connection.close(code: 4001, reason: "switching region")
            }
            #expect(close.initiatedLocally)
            #expect(try await server.waitForClientClose() == .init(code: 4001, reason: "switching region"))
            try await server.waitForDisconnect()
        }
    }

    @Test("leaving the scope without a close closes normally (1000)")
    func leavingTheScopeCloses() async throws {
        try await withServer { server in
            _ = try await scoped(WebSocketRequest(url: server.url)) { _ in }
            #expect(try await server.waitForClientClose().code == 1000)
            try await server.waitForDisconnect()
        }
    }

    @Test("a server that never answers the close holds the scope at most about the close timeout")
    func silentServerIsBounded() async throws {
        try await withServer(.init(answersClose: false)) { server in
            let quick = NIOWebSocketConnector(closeTimeout: .milliseconds(300))
            // Bounded by the close timeout: withSmokeTimeout fails the test instead of hanging if it is not.
            _ = try await scoped(WebSocketRequest(url: server.url), with: quick) { connection in
                await connection.close(code: 1000, reason: "bye")
            }
            #expect(try await server.waitForClientClose() == .init(code: 1000, reason: "bye"))
        }
    }

    /// The server ignores the client's close and keeps sending (a zombie link).
    @Test(
        "a frame that breaks the protocol ends receive() within the close timeout (1002)",
        arguments: ["rsv1", "reserved opcode", "masked"])
    func protocolViolationEndsTheLink(violation: String) async throws {
        try await withServer(.init(answersClose: false)) { server in
            let quick = NIOWebSocketConnector(closeTimeout: .milliseconds(300))
            let (received, close) = try await scoped(WebSocketRequest(url: server.url), with: quick) { connection in
                try await server.send(text: "before")
                let first = try await connection.receive()
                var bad = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "bad"))
                switch violation {
                case "rsv1": bad.rsv1 = true
                // RFC 6455 §5.1: a server must not mask (NIO's decoder would unmask it and read on).
                case "masked": bad.maskKey = [1, 2, 3, 4]
                default: bad.opcode = WebSocketOpcode(encodedWebSocketOpcode: 0x3)!
                }
                try await server.send(frame: bad)
                // The zombie: the server ignores the client's close and keeps the link busy.
                let chatter = Task {
                    for index in 0..<100 {
                        try await Task.sleep(for: .milliseconds(20))
                        try await server.send(text: "after-\(index)")
                    }
                }
                defer { chatter.cancel() }
                var after: [WebSocketMessage] = []
                while let message = try await connection.receive() { after.append(message) }
                return (first, after)
            }
            #expect(received.0 == .text("before"))
            #expect(received.1.isEmpty, "frames read after the connection failed must not be delivered")
            #expect(close == WebSocketCloseInfo(code: 1002, reason: "the WebSocket layer failed the connection", initiatedLocally: true))
            #expect(try await server.waitForClientClose().code == 1002)
            try await server.waitForDisconnect()
        }
    }

    @Test("abort() drops a silent connection at once: a pending receive() returns nil, no handshake is awaited")
    func abortDropsAtOnce() async throws {
        try await withServer(.init(answersClose: false)) { server in
            let slow = NIOWebSocketConnector(closeTimeout: .seconds(30))
            let (received, close) = try await scoped(WebSocketRequest(url: server.url), with: slow) { connection in
                // Aborting cancels the scope's tasks too, so nothing here may throw on cancellation.
                await withTaskGroup(of: WebSocketMessage?.self) { group in
                    group.addTask { (try? await connection.receive()) ?? nil }
                    try? await Task.sleep(for: .milliseconds(50))
                    connection.abort()
                    return await group.next() ?? nil
                }
            }
            #expect(received == nil)
            #expect(close.reason == "aborted" && close.initiatedLocally)
            try await server.waitForDisconnect()
            await #expect(throws: WebSocketSeamError.notConnected) {
                _ = try await slow.withConnection(WebSocketRequest(url: server.url)) { connection in
                    connection.abort()
                    try await connection.send(.text("after abort"))
                }
            }
        }
    }

    // MARK: Failures

    @Test("connecting to a port nobody listens on throws connectionFailed, naming each address tried and the refusal")
    func connectionRefused() async throws {
        // Port 1 on loopback has no listener. (A port freed by a stopped server can be taken at once by another
        // test's server running in parallel, which made this test flaky.)
        #expect(try await connectFailure("ws://127.0.0.1:1/") == "127.0.0.1:1: connection refused (errno \(ECONNREFUSED))")
        // IPv6 in brackets, whatever the reason (a machine without IPv6 has no ::1 to refuse).
        let ipv6 = try await connectFailure("ws://[::1]:1/")
        #expect(ipv6.hasPrefix("[::1]:1: ") && !ipv6.contains(";"), "\(ipv6)")
        // `localhost` may resolve to both loopback addresses: one entry for each.
        let entries = try await connectFailure("ws://localhost:1/").split(separator: "; ").map(String.init)
        #expect(!entries.isEmpty)
        for entry in entries {
            #expect(["127.0.0.1:1", "[::1]:1"].map { "\($0): connection refused (errno \(ECONNREFUSED))" }.contains(entry), "\(entry)")
        }
    }

    @Test("a host that does not resolve throws connectionFailed, naming the host")
    func hostNotResolved() async throws {
        // `.invalid` never resolves (RFC 6761 §6.4).
        let detail = try await connectFailure("ws://vortex-test.invalid/")
        #expect(detail.hasPrefix("cannot resolve vortex-test.invalid: "), "\(detail)")
        #expect(!detail.contains("SocketAddressError"), "\(detail)")
    }

    /// The detail of the `connectionFailed` that opening `url` throws.
    private func connectFailure(_ url: String) async throws -> String {
        let request = WebSocketRequest(url: try #require(URL(string: url)))
        let error = await #expect(throws: WebSocketSeamError.self) { try await connect(request) }
        guard case .connectionFailed(let detail)? = error else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
            return ""
        }
        return detail
    }

    @Test("an upgrade answered with an HTTP error throws upgradeRejected", arguments: [HTTPResponseStatus.notFound, .unauthorized])
    func upgradeRejected(status: HTTPResponseStatus) async throws {
        try await withServer(.init(rejectUpgradeWith: status)) { server in
            let error = await #expect(throws: WebSocketSeamError.self) {
                try await connect(WebSocketRequest(url: server.url, subprotocols: ["aws-appsync-event-ws"]))
            }
            guard case .upgradeRejected(let detail)? = error else {
                Issue.record("expected upgradeRejected, got \(String(describing: error))")
                return
            }
            // The status is reported, so a refusal for authentication can be told apart.
            #expect(detail.hasPrefix("HTTP \(status.code)"))
            #expect(error?.isAuthenticationRejection == (status == .unauthorized))
            let headers = try await server.waitForUpgradeRequest()
            #expect(headers["Sec-WebSocket-Protocol"] == ["aws-appsync-event-ws"])
        }
    }

    /// The local backend's refusal of bad connect-time credentials, squeezed: the 101, an answer, a close frame and the
    /// end of the TCP connection, flushed back to back, so the client may read the end in the same turn of the loop as
    /// the 101, before NIO has finished the upgrade. Without `DeferredInactiveHandler`, 17 of 20 rounds failed with
    /// "the connection ended during the upgrade", hiding the server's answer behind a network failure.
    @Test(
        "a server that answers, closes and hangs up right behind the 101: the scope opens and reads the answer and the code",
        arguments: 0..<20)
    func answerAndHangUpBehindTheUpgrade(round: Int) async throws {
        let server = try await NIOWebSocketTestServer.start(
            NIOWebSocketTestServer.Behaviour { channel, _ in
                let answer = WebSocketFrame(
                    fin: true, opcode: .text, data: channel.allocator.buffer(string: #"{"type":"connection_error"}"#))
                var code = channel.allocator.buffer(capacity: 2)
                code.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: 4403))
                channel.write(answer, promise: nil)
                channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: code)).whenComplete { _ in
                    channel.close(promise: nil)
                }
            })
        let outcome: Result<([WebSocketMessage], WebSocketCloseInfo), any Error>
        do {
            outcome = .success(
                try await scoped(WebSocketRequest(url: server.url)) { connection in
                    var messages: [WebSocketMessage] = []
                    while let message = try await connection.receive() { messages.append(message) }
                    return messages
                })
        } catch {
            outcome = .failure(error)
        }
        await server.shutdown()
        let (messages, close) = try outcome.get()
        #expect(messages == [.text(#"{"type":"connection_error"}"#)], "round \(round)")
        #expect(close.code == 4403, "round \(round): \(close)")
    }

    @Test("cancelling connect() while the server stalls the upgrade throws CancellationError promptly")
    func cancellingConnect() async throws {
        try await withServer(.init(silentUpgrade: true)) { server in
            let connector = connector
            let attempt = Task { try await connector.withConnection(WebSocketRequest(url: server.url)) { _ in } }
            // Connected and waiting for the answer to its upgrade request, which never comes.
            try await server.waitForAcceptedConnection()
            attempt.cancel()
            let outcome = try await withSmokeTimeout(10, "the cancelled connect") { await attempt.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }

    // MARK: Helpers

    /// Runs `body` in a connection scope, failing instead of hanging.
    private func scoped<Value: Sendable>(
        _ request: WebSocketRequest,
        with connector: NIOWebSocketConnector? = nil,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> (Value, WebSocketCloseInfo) {
        let connector = connector ?? self.connector
        let result = try await withSmokeTimeout(20, "the connection scope") { try await connector.withConnection(request, body) }
        return (result.value, result.close)
    }

    private func connect(_ request: WebSocketRequest) async throws {
        _ = try await scoped(request) { _ in }
    }
}
