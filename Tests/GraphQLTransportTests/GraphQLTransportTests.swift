import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

@Suite("graphql-transport-ws through the scripted server")
struct GraphQLTransportTests {
    @Test("lazy connect, connection_init with the token, subscribe payload; live once the confirmation window passes without an error")
    func handshake() async throws {
        let harness = try GraphQLHarness()
        // Nothing to wait for: a transport that has nothing subscribed has started nothing that could connect (the
        // actor's state, read through it, is idle), and the one connection below is the only one ever asked for.
        var states = await harness.transport.connectionStates().makeAsyncIterator()
        #expect(await states.next() == .idle)
        #expect(harness.server.connectionCount == 0)
        let probe = await harness.subscribe()
        let connection = try await harness.acceptConnection()
        #expect(harness.server.connectionCount == 1 && harness.auth.credentialRequests == [false])
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "subscribe")
        #expect(frame["id"] as? String == "op-1")
        let payload = try #require(frame["payload"] as? [String: Any])
        #expect(payload["query"] as? String == GraphQLHarness.deviceQuery.query)
        #expect(payload["variables"] as? [String: String] == ["orgId": "o-1"])
        #expect(probe.events.isEmpty, "not live before a next or the confirmation window")
        try await harness.passConfirmationWindow()
        #expect(try await probe.next() == .live)
        await harness.transport.disconnect()
    }

    @Test("next delivers the subscription field's value, with errors beside it")
    func nextPayloads() async throws {
        let harness = try GraphQLHarness()
        let (probe, connection, id) = try await harness.live()
        connection.emit(#"{"id":"\#(id)","type":"next","payload":{"data":{"subscribeDeviceState":{"mac":"AA","online":true}}}}"#)
        connection.emit(
            #"{"id":"\#(id)","type":"next","payload":{"data":{"subscribeDeviceState":{"mac":"BB","online":null}},"errors":[{"message":"partial"}]}}"#
        )
        connection.emit(#"{"id":"\#(id)","type":"next","payload":{"data":null,"errors":[{"message":"boom"}]}}"#)
        guard case .payload(let first) = try await probe.next(), case .payload(let second) = try await probe.next(),
            case .payload(let third) = try await probe.next()
        else { Issue.record("expected three payloads"); return }
        #expect(first.text == #"{"mac":"AA","online":true}"#)
        #expect(first.graphQLErrorsJSON == nil)
        #expect(second.text == #"{"mac":"BB","online":null}"#)
        #expect(second.graphQLErrorsJSON.map { String(decoding: $0, as: UTF8.self) } == #"[{"message":"partial"}]"#)
        #expect(third.text == "null")
        #expect(third.graphQLErrorsJSON != nil)
        await harness.transport.disconnect()
    }

    @Test("routing reads what the JSON says: ids alternating between streams, escaped type, id and keys, the first of repeated keys")
    func routingFidelity() async throws {
        let harness = try GraphQLHarness()
        let (first, connection, firstID) = try await harness.live()
        let second = await harness.subscribe()
        let secondID = try await GraphQLHarness.expectSubscribe(on: connection)
        #expect(firstID == "op-1" && secondID == "op-2", "ids of one length, so only their bytes tell them apart")
        func next(_ id: String, _ value: Int) -> String { #"{"id":"\#(id)","type":"next","payload":{"data":{"f":\#(value)}}}"# }
        connection.emit(next(secondID, 1))
        connection.emit(next(firstID, 2))
        connection.emit(next(secondID, 3))
        connection.emit(#"{"id":"op\u002d1","type":"ne\u0078t","payload":{"data":{"f":4}}}"#)
        connection.emit(#"{"id":"op-1","type":"next","id":"op-2","payload":{"data":{"f":5}},"payload":{"data":{"f":6}}}"#)
        connection.emit(#"{"\u0069d":"op-2","typ\u0065":"next","p\u0061yload":{"dat\u0061":{"f":7}}}"#)
        func payload(_ value: Int) -> SubscriptionEvent { .payload(RealtimePayload(json: Data("\(value)".utf8))) }
        #expect(try await second.next() == .live)
        for expected in [1, 3, 7] { #expect(try await second.next() == payload(expected)) }
        for expected in [2, 4, 5] { #expect(try await first.next() == payload(expected)) }
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("error ends that stream only; complete ends normally; later messages for those ids are ignored")
    func errorAndComplete() async throws {
        let harness = try GraphQLHarness()
        let (first, connection, firstID) = try await harness.live()
        let second = await harness.subscribe()
        let secondID = try await GraphQLHarness.expectSubscribe(on: connection)
        let third = await harness.subscribe()
        let thirdID = try await GraphQLHarness.expectSubscribe(on: connection)
        connection.emit(#"{"id":"\#(firstID)","type":"error","payload":[{"message":"Cannot query field"}]}"#)
        connection.emit(#"{"id":"\#(secondID)","type":"complete"}"#)
        connection.emit(#"{"id":"\#(firstID)","type":"next","payload":{"data":{"x":1}}}"#)
        connection.emit(#"{"id":"\#(thirdID)","type":"next","payload":{"data":{"x":2}}}"#)
        guard case .failed(let error) = try await first.ending() else { Issue.record("error must fail the stream"); return }
        #expect(error as? RealtimeError == .graphQLErrors(#"[{"message":"Cannot query field"}]"#))
        guard case .finished = try await second.ending() else { Issue.record("complete must end normally"); return }
        #expect(try await third.next() == .live)
        #expect(try await third.next() == .payload(RealtimePayload(json: Data("2".utf8))))
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("cancelling sends complete; the last cancellation closes the socket with 1000")
    func cancelCompletesAndClosesIdle() async throws {
        let harness = try GraphQLHarness()
        let (probe, connection, id) = try await harness.live()
        probe.cancel()
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "complete")
        #expect(frame["id"] as? String == id)
        #expect(try await connection.waitForClientClose().code == 1000)
    }

    @Test("ping is answered with pong at once, before and after the ack")
    func pingPong() async throws {
        let harness = try GraphQLHarness()
        let probe = await harness.subscribe()
        let connection = try await harness.server.nextConnection()
        _ = try await connection.nextSentJSON()
        connection.emit(#"{"type":"ping"}"#)
        #expect(try await connection.nextSentJSON()["type"] as? String == "pong")
        connection.emit(#"{"type":"connection_ack"}"#)
        _ = try await GraphQLHarness.expectSubscribe(on: connection)
        connection.emit(#"{"type":"ping","payload":{"t":1}}"#)
        #expect(try await connection.nextSentJSON()["type"] as? String == "pong")
        _ = probe
        await harness.transport.disconnect()
    }

    @Test(
        "a server that ignores WebSocket pings: the protocol's ping after the quiet period; any frame answers it; silence after it aborts the link and reconnects"
    )
    func protocolPingFallback() async throws {
        let harness = try GraphQLHarness { $0.link.liveness = LivenessSettings(quietPeriod: .seconds(5), pongTimeout: .seconds(2)) }
        harness.server.pingAnswering = .never
        let (probe, connection, id) = try await harness.live()
        // live() let 2 s pass: the WebSocket ping of the ack went unanswered; the protocol's ping is due 5 s after the
        // ack (the last frame).
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        harness.clock.advance(by: .seconds(3))
        #expect(try await connection.nextSentJSON()["type"] as? String == "ping")
        try await harness.clock.waitForSleeper(sleeping: .seconds(2))
        connection.emit(#"{"type":"pong"}"#)
        connection.emit(#"{"type":"next","id":"\#(id)","payload":{"data":{"subscribeDeviceState":{"mac":"m"}}}}"#)
        _ = try await probe.next()
        // The timer wakes at the pong deadline (7 s), finds the answer, and sleeps until 5 s after it (10 s).
        harness.clock.advance(by: .seconds(2))
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        harness.clock.advance(by: .seconds(3))
        #expect(try await connection.nextSentJSON()["type"] as? String == "ping")
        try await harness.clock.waitForSleeper(sleeping: .seconds(2))
        harness.clock.advance(by: .seconds(2))
        // Known dead: dropped at once, no closing handshake to wait for.
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        #expect(connection.pingCount == 1, "one WebSocket ping, at the ack; none after it went unanswered")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await GraphQLHarness.expectSubscribe(on: second) == "op-1")
        try await harness.passConfirmationWindow()
        guard case .resumed = try await probe.next() else { Issue.record("expected resumed"); return }
        await harness.transport.disconnect()
    }

    @Test("no ack in time: abort the link, back off, reconnect with a fresh connection_init")
    func ackTimeout() async throws {
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"), .bearerToken("jwt-2"))
        let harness = try GraphQLHarness(auth: auth)
        let probe = await harness.subscribe()
        let first = try await harness.server.nextConnection()
        _ = try await first.nextSentJSON()
        try await harness.clock.waitForSleeper(sleeping: .seconds(15))
        harness.clock.advance(by: .seconds(15))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection(expectToken: "jwt-2")
        #expect(try await GraphQLHarness.expectSubscribe(on: second) == "op-1")
        try await harness.passConfirmationWindow()
        #expect(try await probe.next() == .live)
        await harness.transport.disconnect()
    }

    @Test("fatal close codes end every stream without reconnecting", arguments: [4400, 4401, 4406, 4409, 4429, 4500] as [UInt16])
    func fatalCloseCodes(code: UInt16) async throws {
        let harness = try GraphQLHarness()
        let (probe, connection, _) = try await harness.live()
        connection.closeFromServer(code: code, reason: "r")
        guard case .failed(let error) = try await probe.ending() else { Issue.record("\(code) must fail"); return }
        #expect(error as? RealtimeError == .closedByServer(code: code, reason: "r"))
        // Stopped for good: the supervisor reports it as it ends, and with it any reconnect.
        let states = await harness.transport.connectionStates()
        let stopped = try await withTestTimeout(5, "the transport to stop") { () -> ConnectionState? in
            for await state in states { if case .disconnected = state { return state } }
            return nil
        }
        #expect(stopped == .disconnected(.failed(.closedByServer(code: code, reason: "r"))))
        #expect(harness.server.requests.count == 1)
    }

    @Test(
        "retryable closes reconnect per policy and resubscribe with the same id",
        arguments: [4408, 4504, 1001, 1005, 1006, 1012, 1013, 1014, 1000] as [UInt16])
    func retryableCloseCodes(code: UInt16) async throws {
        let harness = try GraphQLHarness()
        let (probe, connection, id) = try await harness.live()
        if code == 1006 { connection.failTransport() } else { connection.closeFromServer(code: code) }
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await GraphQLHarness.expectSubscribe(on: second) == id)
        second.emit(#"{"type":"next","id":"\#(id)","payload":{"data":{"subscribeDeviceState":{"mac":"m"}}}}"#)
        guard case .resumed(let gap) = try await probe.next() else { Issue.record("expected resumed after \(code)"); return }
        // The last frame was the ack at 0 s; the gap starts 2 s before it and ends at the first next (12 s).
        #expect(gap.duration == 14)
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data(#"{"mac":"m"}"#.utf8))))
        await harness.transport.disconnect()
    }

    @Test("4403 is retried once at once with refreshed credentials, then sessionExpired")
    func forbiddenRetriedOnce() async throws {
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"), .bearerToken("jwt-2"))
        let harness = try GraphQLHarness(auth: auth)
        let (probe, first, _) = try await harness.live()
        harness.clock.advance(by: SupervisorStateMachine.credentialsProvenAfter)
        first.closeFromServer(code: 4403, reason: "Forbidden")
        let second = try await harness.acceptConnection(expectToken: "jwt-2")
        _ = try await GraphQLHarness.expectSubscribe(on: second)
        harness.clock.advance(by: SupervisorStateMachine.credentialsProvenAfter)
        second.closeFromServer(code: 4403, reason: "Forbidden")
        let third = try await harness.server.nextConnection()
        _ = try await third.nextSentJSON()
        third.closeFromServer(code: 4403, reason: "Forbidden")
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired = error as? RealtimeError else { Issue.record("expected sessionExpired, got \(error)"); return }
        #expect(auth.credentialRequests == [false, true, true])
    }

    @Test("a disconnect waiting for its link does not overwrite the state of a run a subscribe started meanwhile")
    func disconnectRacingANewRun() async throws {
        let harness = try GraphQLHarness()
        _ = try await harness.live()
        harness.server.holdScopeEnds()
        let disconnecting = Task { await harness.transport.disconnect() }
        try await withTestTimeout(scriptedWait, "the old link's end held") {
            while harness.server.heldScopeEnds < 1 { try await TestTime.pollPause() }
        }
        let probe = await harness.subscribe()
        let second = try await harness.acceptConnection()
        _ = try await GraphQLHarness.expectSubscribe(on: second)
        try await harness.passConfirmationWindow()
        #expect(try await probe.next() == .live)
        harness.server.releaseScopeEnds()
        await disconnecting.value
        var states = await harness.transport.connectionStates().makeAsyncIterator()
        #expect(await states.next() == .connected)
        await harness.transport.disconnect()
    }

    @Test("a 4403 right after each acknowledgement ends in sessionExpired, not a reconnect at once for ever")
    func forbiddenAfterEachAcknowledgement() async throws {
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"), .bearerToken("jwt-2"))
        let harness = try GraphQLHarness(auth: auth)
        let (probe, first, _) = try await harness.live()
        first.closeFromServer(code: 4403, reason: "Forbidden")
        let second = try await harness.acceptConnection(expectToken: "jwt-2")
        _ = try await GraphQLHarness.expectSubscribe(on: second)
        second.closeFromServer(code: 4403, reason: "Forbidden")
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired = error as? RealtimeError else { Issue.record("expected sessionExpired, got \(error)"); return }
        #expect(auth.credentialRequests == [false, true])
    }

    @Test(
        "malformed frames and messages before the ack close with 4004 and reconnect",
        arguments: ["not json", #"{"type":"next","id":"op-1","payload":{}}"#, #"{"type":"mystery"}"#])
    func protocolViolations(frame: String) async throws {
        let harness = try GraphQLHarness()
        let probe = await harness.subscribe()
        let first = try await harness.server.nextConnection()
        _ = try await first.nextSentJSON()
        if frame.contains("mystery") {
            first.emit(#"{"type":"connection_ack"}"#)
            _ = try await GraphQLHarness.expectSubscribe(on: first)
        }
        first.emit(frame)
        #expect(try await first.waitForClientClose().code == 4004)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.acceptConnection()
        _ = probe
        await harness.transport.disconnect()
    }

    @Test("signed out: no reconnect, streams end with signedOut")
    func signedOut() async throws {
        let harness = try GraphQLHarness()
        let (probe, connection, _) = try await harness.live()
        harness.auth.setSignedIn(false)
        connection.closeFromServer(code: 1001)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .signedOut)
        #expect(harness.server.requests.count == 1)
    }

    @Test("AppSync topics, publishing and non-loopback ws:// URLs are refused clearly")
    func unsupported() async throws {
        let harness = try GraphQLHarness()
        let probe = SubscriptionProbe(await harness.transport.subscribe(.channel("default/a")))
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        if case .unsupported = error as? RealtimeError {} else { Issue.record("expected unsupported") }
        await #expect(throws: RealtimeError.self) { try await harness.transport.publish(PublishRequest(channel: "a/b", events: ["1"])) }
        #expect(throws: RealtimeError.self) { try GraphQLTransportConfiguration("ws://example.com/graphql") }
        #expect(throws: RealtimeError.self) { try GraphQLTransportConfiguration("https://example.com/graphql") }
        #expect(try GraphQLTransportConfiguration("wss://example.com/graphql").url.host == "example.com")
    }
}
