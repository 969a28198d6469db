// Foundation's Process exists only where a test can spawn a Python interpreter.
#if os(macOS) || os(Linux)
import Foundation
import GraphQLTransport
import Logging
import RealtimeTesting
import SubscriberCore
import Testing
import WebSocketNIO

// Third-party conformance: GraphQLTransport against strawberry-graphql served by uvicorn, over real sockets
// (`Tests/PythonPeers/strawberry_server.py`, versions pinned in `Tests/PythonPeers/requirements.txt`).
//
// `.enabled(if:)` is computed at run time, as for the botocore cross-check:
// - strawberry importable                           -> the suite runs;
// - strawberry missing, CI or VORTEX_REQUIRE_PEERS=1 -> the suite still runs and every test FAILS with the reason;
// - strawberry missing otherwise (a laptop)          -> the suite is reported as SKIPPED, never as passed.
//
// Serialized: every test starts its own server process, and the restart test needs its port to stay free.
@Suite(
    "GraphQLTransport against strawberry-graphql",
    .enabled(
        if: StrawberryPeer.shouldRun,
        "strawberry-graphql is not importable by $VORTEX_PYTHON (or python3); set VORTEX_REQUIRE_PEERS=1 to fail instead"),
    .serialized,
    .timeLimit(.minutes(2))
)
struct StrawberryConformanceTests {
    // MARK: Data, completion, cancellation

    @Test("count(to: 5) delivers 1...5 in order, then the server's complete ends the stream normally")
    func dataInOrderThenComplete() async throws {
        try await withTestTimeout(30, "the count test") {
            try await withStrawberryServer { server in
                try await withTransport(server) { transport in
                    let probe = await subscribe(transport, "subscription { count(to: 5) }")
                    #expect(try await probe.next() == .live)
                    for value in 1...5 {
                        #expect(try await probe.next() == .payload(RealtimePayload(json: Data("\(value)".utf8))))
                    }
                    guard case .finished = try await probe.ending() else {
                        Issue.record("the server's complete must end the stream normally, got \(String(describing: probe.currentEnding))")
                        return
                    }
                    #expect(probe.events.count == 6)
                    // The server completed sub-1; the client answered nothing for it (no complete goes back).
                    let stats = try await server.eventually("the server's complete for sub-1") { stats in
                        stats.log.contains { $0.direction == "out" && $0.type == "complete" && $0.id == "sub-1" }
                    }
                    let nexts = stats.log.filter { $0.direction == "out" && $0.type == "next" && $0.id == "sub-1" }
                    #expect(nexts.count == 5)
                    #expect(stats.log.filter { $0.direction == "in" && $0.id == "sub-1" }.compactMap(\.type) == ["subscribe"])
                }
            }
        }
    }

    @Test("variables and operationName reach strawberry: it runs the named operation of a two-operation document")
    func variablesAndOperationName() async throws {
        try await withTestTimeout(30, "the variables test") {
            try await withStrawberryServer { server in
                try await withTransport(server) { transport in
                    let probe = await subscribe(
                        transport,
                        "subscription Counting { count(to: 3) } subscription Greeting($name: String!) { greet(name: $name) }",
                        operationName: "Greeting", variables: #"{"name":"Ada \"the\" Countess ☃"}"#)
                    #expect(try await probe.next() == .live)
                    guard case .payload(let greeting) = try await probe.next() else {
                        Issue.record("expected the greeting, got \(probe.events)")
                        return
                    }
                    #expect(try greeting.decode(String.self) == "hello, Ada \"the\" Countess ☃", "raw payload: \(greeting.text)")
                    #expect(greeting.graphQLErrorsJSON == nil)
                    guard case .finished = try await probe.ending() else {
                        Issue.record("greet completes after one value, got \(String(describing: probe.currentEnding))")
                        return
                    }
                }
            }
        }
    }

    @Test("cancelling a ticker sends complete: strawberry stops that resolver; a sibling on the same connection keeps flowing")
    func clientCancel() async throws {
        try await withTestTimeout(30, "the cancel test") {
            try await withStrawberryServer { server in
                try await withTransport(server) { transport in
                    let cancelled = await subscribe(transport, "subscription { ticker(ms: 20) }")
                    let sibling = await subscribe(transport, "subscription { ticker(ms: 20) }")
                    #expect(try await cancelled.next() == .live)
                    #expect(try await sibling.next() == .live)
                    #expect(try await payloads(2, from: cancelled) == ["1", "2"])
                    #expect(try await payloads(2, from: sibling) == ["1", "2"])

                    cancelled.cancel()
                    let afterCancel = try await server.eventually("complete for sub-1 and its resolver stopped") { stats in
                        stats.log.contains { $0.direction == "in" && $0.type == "complete" && $0.id == "sub-1" } && stats.tickers == 1
                    }
                    let connection = try #require(afterCancel.connection(subscribing: "sub-1"))
                    #expect(afterCancel.connection(subscribing: "sub-2") == connection, "both subscriptions share one connection")
                    let cancelledEvents = cancelled.events.count
                    let sentForCancelled = afterCancel.log.filter { $0.direction == "out" && $0.type == "next" && $0.id == "sub-1" }.count

                    // The sibling keeps receiving on the same connection; nothing more is sent for (or reaches) sub-1.
                    let more = try await payloads(3, from: sibling)
                    #expect(more.count == 3)
                    let later = try await server.stats()
                    #expect(later.log.filter { $0.direction == "out" && $0.type == "next" && $0.id == "sub-1" }.count == sentForCancelled)
                    #expect(later.log.filter { $0.direction == "out" && $0.type == "next" && $0.id == "sub-2" }.count >= 5)
                    #expect(cancelled.events.count == cancelledEvents)
                    #expect(later.initializedConnections == [connection], "cancelling must not disturb the connection")

                    // Cancelling the last one closes the socket with 1000 (lazy close) and stops its resolver too.
                    sibling.cancel()
                    let closed = try await server.eventually("the client to close its idle socket") { stats in
                        !stats.open.contains(connection) && stats.tickers == 0
                    }
                    let ending = closed.entries(of: connection).filter { $0.type == "<disconnect>" }
                    #expect(ending.map(\.code) == [1000])
                    #expect(closed.entries(of: connection).contains { $0.direction == "in" && $0.type == "complete" && $0.id == "sub-2" })
                }
            }
        }
    }

    @Test(
        "when the server ends the last subscription (complete or error), the client closes the idle socket with 1000 (lazy close)",
        arguments: ["subscription { count(to: 2) }", "subscription { nope }"])
    func lazyCloseAfterServerEnd(_ query: String) async throws {
        try await withTestTimeout(30, "the lazy-close test") {
            try await withStrawberryServer { server in
                try await withTransport(server) { transport in
                    let probe = await subscribe(transport, query)
                    // A subscription is live on its first next; one refused inside the confirmation window never was.
                    if query.contains("count") { #expect(try await probe.next() == .live) }
                    _ = try await probe.ending()
                    let stats = try await server.eventually("the server to end sub-1") { stats in
                        stats.log.contains { $0.direction == "out" && ($0.type == "complete" || $0.type == "error") && $0.id == "sub-1" }
                    }
                    let connection = try #require(stats.connection(subscribing: "sub-1"))
                    // The server ending the last subscription (complete or error) closes the idle socket too.
                    let closed = try await server.eventually("the client to close the idle socket", timeout: 3) { stats in
                        !stats.open.contains(connection)
                    }
                    #expect(closed.entries(of: connection).filter { $0.type == "<disconnect>" }.map(\.code) == [1000])
                }
            }
        }
    }

    // MARK: Errors inside operations

    @Test(
        "a validation error arrives as error: only that stream fails with graphQLErrors; siblings and later subscriptions continue",
        arguments: [
            ValidationCase(query: "subscription { nope }", message: "Cannot query field 'nope' on type 'Subscription'."),
            ValidationCase(
                query: "subscription ($n: Int!) { count(to: $n) }",
                message: "Variable '$n' has invalid value: Expected a value of non-null type 'Int!' to be provided."),
        ])
    func validationErrors(_ item: ValidationCase) async throws {
        try await withTestTimeout(30, "the validation-error test") {
            try await withStrawberryServer { server in
                try await withTransport(server) { transport in
                    let sibling = await subscribe(transport, "subscription { ticker(ms: 20) }")
                    #expect(try await sibling.next() == .live)
                    #expect(try await payloads(1, from: sibling) == ["1"])

                    let invalid = await subscribe(transport, item.query)
                    guard case .failed(let error) = try await invalid.ending() else {
                        Issue.record("an error message must fail the stream, got \(String(describing: invalid.currentEnding))")
                        return
                    }
                    guard case .graphQLErrors(let json)? = error as? RealtimeError else {
                        Issue.record("expected RealtimeError.graphQLErrors, got \(error)")
                        return
                    }
                    let errors = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
                    #expect(errors?.count == 1)
                    #expect(errors?.first?["message"] as? String == item.message)
                    // The error came inside the live-confirmation window: the stream was never reported live.
                    #expect(invalid.events == [])

                    #expect(try await payloads(3, from: sibling).count == 3)
                    let later = await subscribe(transport, "subscription { count(to: 2) }")
                    #expect(try await later.next() == .live)
                    #expect(try await payloads(2, from: later) == ["1", "2"])
                    let stats = try await server.stats()
                    #expect(stats.initializedConnections.count == 1, "an error message must not cost the connection")
                    #expect(stats.log.contains { $0.direction == "out" && $0.type == "error" && $0.id == "sub-2" })
                }
            }
        }
    }

    @Test(
        "a resolver that raises: strawberry sends next with data null and errors, then complete; the stream keeps the data and ends normally"
    )
    func resolverError() async throws {
        try await withTestTimeout(30, "the resolver-error test") {
            try await withStrawberryServer { server in
                try await withTransport(server) { transport in
                    let probe = await subscribe(transport, "subscription { failing(after: 2) }")
                    #expect(try await probe.next() == .live)
                    #expect(try await probe.next() == .payload(RealtimePayload(json: Data("1".utf8))))
                    #expect(try await probe.next() == .payload(RealtimePayload(json: Data("2".utf8))))
                    guard case .payload(let failed) = try await probe.next() else {
                        Issue.record("expected a payload carrying the resolver's error")
                        return
                    }
                    #expect(failed.text == "null")
                    let errors = try #require(failed.graphQLErrorsJSON)
                    let decoded = try JSONSerialization.jsonObject(with: errors) as? [[String: Any]]
                    #expect(decoded?.first?["message"] as? String == "boom after 2")
                    guard case .finished = try await probe.ending() else {
                        Issue.record("strawberry completes after the error payload, got \(String(describing: probe.currentEnding))")
                        return
                    }
                }
            }
        }
    }

    @Test("a syntax error in the document: strawberry closes 4400, which the client treats as fatal for every stream")
    func syntaxErrorClosesConnection() async throws {
        try await withTestTimeout(30, "the syntax-error test") {
            try await withStrawberryServer { server in
                try await withTransport(server, configure: { $0.link.reconnectPolicy = .fixed(.milliseconds(100)) }) { transport in
                    let sibling = await subscribe(transport, "subscription { ticker(ms: 20) }")
                    #expect(try await sibling.next() == .live)
                    #expect(try await payloads(1, from: sibling) == ["1"])
                    let broken = await subscribe(transport, "subscription { count(to: 3) ")
                    for probe in [broken, sibling] {
                        guard case .failed(let error) = try await probe.ending() else {
                            Issue.record("4400 is fatal: the stream must fail, got \(String(describing: probe.currentEnding))")
                            continue
                        }
                        guard case .closedByServer(let code, let reason)? = error as? RealtimeError else {
                            Issue.record("expected closedByServer, got \(error)")
                            continue
                        }
                        #expect(code == 4400)
                        #expect(reason.hasPrefix("Syntax Error"))
                    }
                    // Fatal: no reconnect, even with a 100 ms policy. Once the transport reports it stopped, none can come.
                    #expect(try await stopped(transport) == .disconnected(.failed(.closedByServer(code: 4400, reason: reason(of: broken)))))
                    let stats = try await server.stats()
                    #expect(stats.initializedConnections.count == 1)
                    #expect(stats.log.contains { $0.type == "<close>" && $0.code == 4400 })
                }
            }
        }
    }

    // MARK: Authorization (4403)

    @Test("4403 twice (a bad token, then a bad refreshed one): the stream fails with sessionExpired and nothing more is tried")
    func forbiddenTwiceIsSessionExpired() async throws {
        try await withTestTimeout(30, "the 4403 test") {
            try await withStrawberryServer { server in
                let auth = ScriptedAuthSession(.bearerToken("wrong-1"), .bearerToken("wrong-2"))
                try await withTransport(server, auth: auth) { transport in
                    let probe = await subscribe(transport, "subscription { count(to: 1) }")
                    guard case .failed(let error) = try await probe.ending(timeout: 10) else {
                        Issue.record("expected the stream to fail, got \(String(describing: probe.currentEnding))")
                        return
                    }
                    guard case .sessionExpired? = error as? RealtimeError else {
                        Issue.record("expected RealtimeError.sessionExpired, got \(error)")
                        return
                    }
                    #expect(probe.events.isEmpty)
                    #expect(auth.credentialRequests == [false, true], "one retry, with forceRefresh")
                    let stats = try await server.eventually("both attempts to be closed") { stats in
                        stats.log.filter { $0.type == "<close>" }.count == 2 && stats.open.isEmpty
                    }
                    let inits = stats.log.filter { $0.direction == "in" && $0.type == "connection_init" }
                    #expect(inits.map(\.authorization) == ["wrong-1", "wrong-2"])
                    for connection in inits.map(\.conn) {
                        #expect(stats.entries(of: connection).filter { $0.type == "<close>" }.map(\.code) == [4403])
                        #expect(!stats.entries(of: connection).contains { $0.type == "subscribe" })
                    }
                    // The transport has stopped, so there is no third attempt to come.
                    #expect(try await stopped(transport) == .disconnected(.sessionExpired))
                    #expect(try await server.stats().initializedConnections.count == 2)
                }
            }
        }
    }

    @Test("4403 then a good refreshed token: the client retries at once and the subscription works")
    func forbiddenThenRefreshedTokenRecovers() async throws {
        try await withTestTimeout(30, "the 4403 recovery test") {
            try await withStrawberryServer { server in
                let auth = ScriptedAuthSession(.bearerToken("wrong"), .bearerToken(StrawberryPeer.token))
                try await withTransport(server, auth: auth) { transport in
                    let probe = await subscribe(transport, "subscription { count(to: 2) }")
                    #expect(try await probe.next(timeout: 10) == .live)
                    #expect(try await payloads(2, from: probe) == ["1", "2"])
                    guard case .finished = try await probe.ending() else {
                        Issue.record("expected a normal end, got \(String(describing: probe.currentEnding))")
                        return
                    }
                    #expect(auth.credentialRequests == [false, true])
                    let stats = try await server.stats()
                    let inits = stats.log.filter { $0.direction == "in" && $0.type == "connection_init" }
                    #expect(inits.map(\.authorization) == ["wrong", StrawberryPeer.token])
                    if let rejected = inits.first?.conn {
                        #expect(stats.entries(of: rejected).filter { $0.type == "<close>" }.map(\.code) == [4403])
                    }
                    #expect(stats.connection(subscribing: "sub-1") == inits.last?.conn)
                }
            }
        }
    }

    // MARK: Close codes provoked with raw frames

    @Test("a connection that never sends connection_init is closed with 4408 after the server's init timeout")
    func initWithheldCloses4408() async throws {
        try await withTestTimeout(30, "the 4408 test") {
            try await withStrawberryServer(initTimeoutMilliseconds: 300) { server in
                let socket = try await RawGraphQLSocket.open(server)
                let opened = ContinuousClock.now
                let info = try await socket.closeInfo(timeout: 10)
                let waited = ContinuousClock.now - opened
                #expect(info.code == 4408)
                #expect(info.reason == "Connection initialisation timeout")
                #expect(!info.initiatedLocally)
                #expect(waited >= .milliseconds(200), "closed after \(waited), before the 300 ms init timeout")
            }
        }
    }

    @Test("frames the transport never sends are rejected with the spec's close codes", arguments: RawViolation.allCases)
    func rawViolations(_ violation: RawViolation) async throws {
        try await withTestTimeout(30, "the raw-frame test") {
            try await withStrawberryServer { server in
                let socket = try await RawGraphQLSocket.open(server)
                if violation != .subscribeBeforeAck {
                    try await socket.initialize(token: server.token)
                }
                switch violation {
                case .duplicateID:
                    let subscribe = #"{"id":"dup","type":"subscribe","payload":{"query":"subscription { ticker(ms: 20) }"}}"#
                    try await socket.send(subscribe)
                    // The id is in use once its first value arrives.
                    while true {
                        let frame = try await socket.nextFrame()
                        if frame.type == "next" && frame.id == "dup" { break }
                    }
                    try await socket.send(subscribe)
                case .malformedJSON:
                    try await socket.send("this is not json")
                case .unknownType:
                    try await socket.send(#"{"type":"mystery"}"#)
                case .missingType:
                    try await socket.send(#"{"id":"x"}"#)
                case .subscribeBeforeAck:
                    try await socket.send(#"{"id":"early","type":"subscribe","payload":{"query":"subscription { count(to: 1) }"}}"#)
                case .secondInit:
                    try await socket.send(#"{"type":"connection_init","payload":{"Authorization":"\#(server.token)"}}"#)
                }
                let info = try await socket.closeInfo()
                #expect(info.code == violation.expectedCode)
                #expect(info.reason == violation.expectedReason)
                #expect(!info.initiatedLocally)
            }
        }
    }

    // MARK: Keep-alive and reconnect

    @Test("client keep-alive: on a quiet link strawberry answers every ping with pong, so the connection holds")
    func keepAlive() async throws {
        try await withTestTimeout(30, "the keep-alive test") {
            try await withStrawberryServer { server in
                try await withTransport(
                    server,
                    configure: {
                        // The protocol's ping (the fallback where a server ignores WebSocket pings) is what this checks.
                        $0.link.liveness = LivenessSettings(
                            quietPeriod: .milliseconds(100), pongTimeout: .milliseconds(300), webSocketPings: false)
                    }
                ) { transport in
                    // One value, then silence: pings go out only when the link is quiet (any frame proves it alive).
                    let probe = await subscribe(transport, "subscription { ticker(ms: 60000) }")
                    #expect(try await probe.next() == .live)
                    let stats = try await server.eventually("three pings answered") { stats in
                        stats.log.filter { $0.direction == "in" && $0.type == "ping" }.count >= 3
                            && stats.log.filter { $0.direction == "out" && $0.type == "pong" }.count >= 3
                    }
                    #expect(stats.initializedConnections.count == 1, "a pong in time must keep the connection")
                    #expect(!probe.events.contains { if case .resumed = $0 { true } else { false } })
                    #expect(probe.currentEnding == nil)
                }
            }
        }
    }

    @Test(
        "client keep-alive cadence: on a quiet link with prompt pongs, a ping goes out every quiet period (not every quiet period + pong timeout)"
    )
    func keepAliveCadence() async throws {
        try await withTestTimeout(90, "the keep-alive cadence test") {
            try await withStrawberryServer { server in
                try await withTransport(
                    server,
                    configure: {
                        $0.link.liveness = LivenessSettings(
                            quietPeriod: .milliseconds(150), pongTimeout: .seconds(120), webSocketPings: false)
                    }
                ) { transport in
                    let probe = await subscribe(transport, "subscription { ticker(ms: 60000) }")
                    #expect(try await probe.next() == .live)
                    let first = try await server.eventually("the first ping answered") { stats in
                        stats.log.contains { $0.direction == "out" && $0.type == "pong" }
                    }
                    #expect(first.initializedConnections.count == 1)
                    // The next ping is due a quiet period after the pong (the last frame), not after the pong timeout:
                    // three more take about 450 ms, where pings a pong timeout apart would take 6 minutes. The 30 s
                    // deadline tells the two apart however loaded the machine is.
                    try await server.eventually("four pings", timeout: 30) { stats in
                        stats.log.filter { $0.direction == "in" && $0.type == "ping" }.count >= 4
                    }
                }
            }
        }
    }

    @Test(
        "the server process is killed and restarted on the same port: the stream yields resumed(gap:) and data flows again under the same id",
        arguments: ServerEnd.allCases)
    func reconnectAfterServerRestart(_ end: ServerEnd) async throws {
        try await withTestTimeout(60, "the restart test") {
            try await withStrawberryServer { first in
                try await withTransport(first, configure: { $0.link.reconnectPolicy = .fixed(.milliseconds(300)) }) { transport in
                    let probe = await subscribe(transport, "subscription { ticker(ms: 50) }")
                    #expect(try await probe.next() == .live)
                    #expect(try await payloads(2, from: probe) == ["1", "2"])
                    let killedAt = Date()
                    switch end {
                    case .killed: await first.kill()
                    case .terminated: await first.stop()
                    }
                    #expect(!first.isRunning)

                    try await withStrawberryServer(port: first.port) { second in
                        var gap: GapWindow?
                        while gap == nil {
                            switch try await probe.next(timeout: 20) {
                            case .resumed(let window): gap = window
                            case .payload: continue  // values already in flight before the kill
                            case .live: Issue.record("a reconnect must report resumed, not live")
                            case .lost(let loss): Issue.record("no event may be lost outside a gap: \(loss)")
                            }
                        }
                        let window = try #require(gap)
                        // The gap starts at the last frame before the kill, minus the 2 s safety margin.
                        #expect(window.start >= killedAt.addingTimeInterval(-3))
                        #expect(window.end > window.start)
                        // The restarted server's ticker starts again from 1.
                        #expect(try await payloads(3, from: probe) == ["1", "2", "3"])
                        let stats = try await second.stats()
                        #expect(stats.initializedConnections.count == 1)
                        #expect(stats.log.first { $0.type == "connection_init" }?.authorization == StrawberryPeer.token)
                        #expect(stats.log.filter { $0.direction == "in" && $0.type == "subscribe" }.compactMap(\.id) == ["sub-1"])
                        #expect(probe.currentEnding == nil)
                    }
                }
            }
        }
    }
}

// MARK: - Cases

extension StrawberryConformanceTests {
    /// How the first server goes away in the restart test.
    enum ServerEnd: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// SIGKILL: the socket ends without a close frame (1006 on the client).
        case killed = "SIGKILL (no close frame: 1006)"
        /// SIGTERM: uvicorn's graceful shutdown closes every WebSocket with 1012 (service restart).
        case terminated = "SIGTERM (uvicorn closes with 1012)"

        var testDescription: String { rawValue }
    }

    struct ValidationCase: Sendable, CustomTestStringConvertible {
        var query: String
        var message: String
        var testDescription: String { query }
    }

    enum RawViolation: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case duplicateID = "subscribe with an id still in use"
        case malformedJSON = "a frame that is not JSON"
        case unknownType = "an unknown message type"
        case missingType = "a message without type"
        case subscribeBeforeAck = "subscribe before connection_init"
        case secondInit = "a second connection_init"

        var testDescription: String { "\(rawValue) -> \(expectedCode)" }

        var expectedCode: UInt16 {
            switch self {
            case .duplicateID: 4409
            case .malformedJSON, .unknownType, .missingType: 4400
            case .subscribeBeforeAck: 4401
            case .secondInit: 4429
            }
        }

        /// strawberry's reasons, spelled as it sends them.
        var expectedReason: String {
            switch self {
            case .duplicateID: "Subscriber for dup already exists"
            case .malformedJSON: "WebSocket message must be valid JSON"
            case .unknownType: "Unknown message type: mystery"
            case .missingType: "Failed to parse message"
            case .subscribeBeforeAck: "Unauthorized"
            case .secondInit: "Too many initialisation requests"
            }
        }
    }
}

// MARK: - Helpers

/// Runs `body` with a transport on the real socket connector (ids `sub-1`, `sub-2`, ... so the server's log can be
/// read), and disconnects it however `body` ends, so a failed test leaves no transport reconnecting in the background.
private func withTransport<T>(
    _ server: PythonServer,
    auth: ScriptedAuthSession = ScriptedAuthSession(.bearerToken(StrawberryPeer.token)),
    configure: (inout GraphQLTransportConfiguration) -> Void = { _ in },
    _ body: (GraphQLTransport) async throws -> T
) async throws -> T {
    var configuration = try GraphQLTransportConfiguration(server.urlText)
    configuration.link.ackTimeout = .seconds(10)
    configure(&configuration)
    let counter = Locked(0)
    var logger = Logger(label: "test.graphql.strawberry")
    logger.logLevel = .warning
    let transport = GraphQLTransport(
        configuration: configuration,
        auth: auth,
        connector: NIOWebSocketConnector(closeTimeout: .seconds(2)),
        logger: logger,
        makeID: {
            counter.withLock { value in
                value += 1
                return "sub-\(value)"
            }
        })
    let result: Result<T, any Error>
    do {
        result = .success(try await body(transport))
    } catch {
        result = .failure(error)
    }
    await transport.disconnect()
    return try result.get()
}

private func subscribe(
    _ transport: GraphQLTransport, _ query: String, operationName: String? = nil, variables: String? = nil
) async -> SubscriptionProbe {
    SubscriptionProbe(
        await transport.subscribe(.graphQL(GraphQLOperation(query: query, operationName: operationName, variablesJSON: variables))))
}

/// The state the transport ends in once it stops for good (its supervisor has ended: it will not connect again).
private func stopped(_ transport: GraphQLTransport) async throws -> ConnectionState? {
    let states = await transport.connectionStates()
    return try await withTestTimeout(10, "the transport to stop") { () -> ConnectionState? in
        for await state in states { if case .disconnected = state { return state } }
        return nil
    }
}

/// The close reason a stream failed with (`""` when it did not fail with a server close).
private func reason(of probe: SubscriptionProbe) -> String {
    guard case .failed(let error)? = probe.currentEnding, case .closedByServer(_, let reason)? = error as? RealtimeError else { return "" }
    return reason
}

/// The texts of the next `count` events, which must all be payloads.
private func payloads(_ count: Int, from probe: SubscriptionProbe, timeout: Double = 5) async throws -> [String] {
    var texts: [String] = []
    for _ in 0..<count {
        let event = try await probe.next(timeout: timeout)
        guard case .payload(let payload) = event else {
            Issue.record("expected a payload, got \(event)")
            return texts
        }
        texts.append(payload.text)
    }
    return texts
}
#endif
