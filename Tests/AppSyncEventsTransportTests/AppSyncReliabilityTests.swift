import AppSyncEventsWire
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

@Suite("AppSync Events reliability: timers, reconnects, auth, rotation")
struct AppSyncReliabilityTests {
    /// Subscribes to `channel`, accepts the connection and confirms the subscription.
    private func liveSubscription(
        _ harness: AppSyncHarness, _ channel: String = "default/a", timeoutMs: Int? = nil
    )
        async throws -> (SubscriptionProbe, ScriptedConnection, String)
    {
        let probe = await harness.subscribe(channel)
        let connection = try await harness.acceptConnection(timeoutMs: timeoutMs)
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: channel)
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        return (probe, connection, id)
    }

    @Test("no connection_ack within the ack timeout: close, back off per policy, connect again")
    func ackTimeout() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let first = try await harness.server.nextConnection()
        #expect(try await first.nextSentJSON()["type"] as? String == "connection_init")
        try await harness.clock.waitForSleeper(sleeping: .seconds(15))
        harness.clock.advance(by: .seconds(15))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted, "a link without an ack in time is dropped at once")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == "id-1")
        #expect(probe.currentEnding == nil)
        await harness.transport.disconnect()
    }

    @Test("keep-alive: activity holds the watchdog off; a full connectionTimeoutMs of silence reconnects and resumes with a gap")
    func keepAliveSilence() async throws {
        let harness = try AppSyncHarness()
        let (probe, first, id) = try await liveSubscription(harness, timeoutMs: 4000)
        try await harness.clock.waitForSleeper(sleeping: .seconds(4))
        harness.clock.advance(by: .seconds(3))
        first.emit(#"{"type":"ka"}"#)
        first.emit(AppSyncHarness.dataFrame(id: id, event: "1"))
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data("1".utf8))))
        // The timer wakes at the old deadline, finds the frame of 3 s, and sleeps until 3 + 4 s.
        harness.clock.advance(by: .seconds(1))
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        #expect(first.clientClose == nil)
        harness.clock.advance(by: .seconds(3))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted, "a silent link is dropped at once, without waiting for a closing handshake")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == id)
        second.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        guard case .resumed(let gap) = try await probe.next() else { Issue.record("expected resumed(gap:)"); return }
        // The gap starts at the last frame (3 s) minus the 2 s margin, not when the silence was noticed (7 s).
        #expect(gap.start == Date(timeIntervalSince1970: 1_700_000_001))
        #expect(gap.duration == 16)
        await harness.transport.disconnect()
    }

    @Test("a server close with 1000 while subscriptions are live reconnects, resubscribes with the same ids and reports the gap")
    func reconnectAfterNormalClose() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        let (probe, first, id) = try await liveSubscription(harness)
        let sibling = await harness.subscribe("default/b")
        let siblingID = try await AppSyncHarness.expectSubscribe(on: first, channel: "default/b")
        first.emit(#"{"type":"subscribe_success","id":"\#(siblingID)"}"#)
        #expect(try await sibling.next() == .live)
        #expect(harness.transport.lastConnectionFailure == nil)
        first.closeFromServer(code: 1000, reason: "")
        try await states.waitFor(.reconnecting(attempt: 1, delay: .seconds(10)))
        #expect(harness.transport.lastConnectionFailure == "closed by the server, close 1000 (remote)")
        let lostAt = try #require(harness.transport.connectionLostAt, "the outage's start, while reconnecting")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        let resent = [
            try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a"),
            try await AppSyncHarness.expectSubscribe(on: second, channel: "default/b"),
        ]
        #expect(resent == [id, siblingID])
        second.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        second.emit(#"{"type":"subscribe_success","id":"\#(siblingID)"}"#)
        guard case .resumed(let gap) = try await probe.next(), case .resumed = try await sibling.next() else {
            Issue.record("both must resume"); return
        }
        // 10 s of backoff, plus the 2 s safety margin before the last frame.
        #expect(gap.duration == 12)
        #expect(gap.start == lostAt.addingTimeInterval(-2), "the transport's gap and its outage start agree")
        second.emit(AppSyncHarness.dataFrame(id: id, event: #"{"after":true}"#))
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data(#"{"after":true}"#.utf8))))
        try await states.waitFor(.connected)
        #expect(states.recorded.first == .idle)
        #expect(harness.transport.lastConnectionFailure == nil, "connected again")
        #expect(harness.transport.connectionLostAt == nil, "connected again")
        await harness.transport.disconnect()
    }

    @Test("the reconnect policy's attempt limit ends streams with reconnectAttemptsExhausted")
    func attemptLimit() async throws {
        let harness = try AppSyncHarness { $0.link.reconnectPolicy = .fixed(.seconds(2), maxAttempts: 1) }
        let (probe, first, _) = try await liveSubscription(harness)
        harness.server.refuseNextConnections(5)
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(2))
        harness.clock.advance(by: .seconds(2))
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .reconnectAttemptsExhausted(1))
        #expect(harness.transport.lastConnectionFailure == "open failed: WebSocket connection failed: refused by the test")
        await harness.transport.disconnect()
        #expect(harness.transport.lastConnectionFailure == nil, "disconnected on purpose")
    }

    @Test("lastConnectionFailure: a refused attempt until connected; none after the connection closes on purpose")
    func lastConnectionFailure() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        harness.server.refuseNextConnections(1, with: .upgradeRejected("HTTP 503"))
        let probe = await harness.subscribe("default/a")
        try await states.waitFor(.reconnecting(attempt: 1, delay: .seconds(10)))
        #expect(harness.transport.lastConnectionFailure == "open failed: WebSocket upgrade rejected: HTTP 503")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        #expect(harness.transport.lastConnectionFailure == nil, "connected")
        probe.cancel()
        _ = try await connection.waitForClientClose()
        try await waitUntil("idle after the close") { states.recorded.last == .idle }
        #expect(harness.transport.lastConnectionFailure == nil, "an acknowledged link closed on purpose: the failure before it is history")
        await harness.transport.disconnect()
    }

    @Test("signed out before a reconnect: no new connection, streams end with signedOut")
    func signedOutStops() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        let (probe, first, _) = try await liveSubscription(harness)
        harness.auth.setSignedIn(false)
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .signedOut)
        try await states.waitFor(.disconnected(.signedOut))
        #expect(harness.server.requests.count == 1)
    }

    @Test("an auth rejection is retried once at once with refreshed credentials, then sessionExpired")
    func authFailureLimit() async throws {
        let auth = ScriptedAuthSession(.bearerToken("old"), .bearerToken("new"))
        let harness = try AppSyncHarness(auth: auth)
        let probe = await harness.subscribe("default/a")
        for _ in 0..<2 {
            let connection = try await harness.server.nextConnection()
            _ = try await connection.nextSentJSON()
            connection.emit(#"{"type":"connection_error","errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#)
            _ = try await connection.waitForClientClose()
        }
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired = error as? RealtimeError else { Issue.record("expected sessionExpired, got \(error)"); return }
        #expect(auth.credentialRequests == [false, true])
        let secondHeader = try #require(harness.server.requests.last?.subprotocols.last)
        let decoded = try #require(Base64URL.decode(String(secondHeader.dropFirst("header-".count))))
        #expect(String(decoding: decoded, as: UTF8.self).contains("new"))
        #expect(harness.server.connectionCount == 2)
    }

    @Test("rotation before the maximum duration: every event exactly once, in order, with no gap reported")
    func rotationWithoutGapOrDuplicate() async throws {
        let harness = try AppSyncHarness {
            $0.maxConnectionDuration = .seconds(100)
            $0.rotationLead = .seconds(10)
            $0.link.liveness.quietPeriod = nil  // the rotation's timeline alone
        }
        let (probe, old, id) = try await liveSubscription(harness)
        func event(_ n: Int) -> String { #"{"n":\#(n)}"# }
        old.emit(AppSyncHarness.dataFrame(id: id, event: event(1)))
        _ = try await probe.next()
        try await harness.clock.waitForSleeper(sleeping: .seconds(90))
        harness.clock.advance(by: .seconds(90))
        let new = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: new, channel: "default/a") == id)
        old.emit(AppSyncHarness.dataFrame(id: id, event: event(2)))
        new.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        old.emit(AppSyncHarness.dataFrame(id: id, event: event(3)))
        new.emit(AppSyncHarness.dataFrame(id: id, event: event(3)))
        let unsubscribe = try await old.nextSentJSON()
        #expect(unsubscribe["type"] as? String == "unsubscribe")
        #expect(unsubscribe["id"] as? String == id)
        old.emit(AppSyncHarness.dataFrame(id: id, event: event(4)))
        new.emit(AppSyncHarness.dataFrame(id: id, event: event(4)))
        old.emit(#"{"type":"unsubscribe_success","id":"\#(id)"}"#)
        new.emit(AppSyncHarness.dataFrame(id: id, event: event(5)))
        let close = try await old.waitForClientClose()
        #expect(close.code == 1000 && close.reason == "rotated")
        new.emit(AppSyncHarness.dataFrame(id: id, event: event(6)))
        for _ in 2...6 { _ = try await probe.next() }
        #expect(probe.payloadTexts == (1...6).map(event))
        #expect(!probe.events.contains { if case .resumed = $0 { true } else { false } })
        #expect(!new.isClosed)
        await harness.transport.disconnect()
    }

    @Test("WebSocket publish: per-event partial failure is returned; publish_error throws")
    func webSocketPublish() async throws {
        let harness = try AppSyncHarness()
        let transport = harness.transport
        async let result = transport.publish(PublishRequest(channel: "default/a", events: [#"{"a":1}"#, #"{"b":"<x/>"}"#]))
        let connection = try await harness.acceptConnection()
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "publish")
        #expect(frame["channel"] as? String == "default/a")
        #expect(frame["events"] as? [String] == [#"{"a":1}"#, #"{"b":"<x/>"}"#])
        #expect(frame["authorization"] as? [String: String] != nil)
        let id = try #require(frame["id"] as? String)
        connection.emit(
            #"{"type":"publish_success","id":"\#(id)","successful":[{"identifier":"e1","index":0}],"failed":[{"identifier":"e2","index":1,"code":400,"message":"bad"}]}"#
        )
        let outcome = try await result
        #expect(
            outcome
                == PublishResult(
                    successful: [PublishedEvent(identifier: "e1", index: 0)],
                    failed: [FailedEvent(identifier: "e2", index: 1, code: 400, message: "bad")]))
        #expect(!outcome.allSucceeded)

        let rejected = Task { try await transport.publish(PublishRequest(channel: "default/a", events: ["1"])) }
        let second = try await harness.acceptConnection()
        let secondID = try #require(try await second.nextSentJSON()["id"] as? String)
        second.emit(#"{"type":"publish_error","id":"\#(secondID)","errors":[{"errorType":"BadRequestException","message":"no"}]}"#)
        await #expect(throws: RealtimeError.publishRejected(errorType: "BadRequestException", message: "no")) {
            try await rejected.boundedValue()
        }
        await #expect(throws: RealtimeError.self) { try await transport.publish(PublishRequest(channel: "default/*", events: ["1"])) }
        await transport.disconnect()
    }

    @Test("an upgrade refused with HTTP 401 counts as an auth rejection; a connection error mentioning 401 in an address does not")
    func upgradeRejectionClassification() async throws {
        let auth = ScriptedAuthSession(.bearerToken("old"), .bearerToken("new"))
        let harness = try AppSyncHarness(auth: auth)
        harness.server.refuseNextConnections(2, with: .upgradeRejected("HTTP 401 Unauthorized"))
        let probe = await harness.subscribe("default/a")
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired = error as? RealtimeError else { Issue.record("expected sessionExpired, got \(error)"); return }
        #expect(auth.credentialRequests == [false, true])

        let other = ScriptedAuthSession(.bearerToken("jwt"))
        let second = try AppSyncHarness(auth: other) { $0.link.reconnectPolicy = .fixed(.seconds(1), maxAttempts: 1) }
        second.server.refuseNextConnections(2, with: .connectionFailed("connect to 127.0.0.1:40133 (error 401-ish)"))
        let retried = await second.subscribe("default/a")
        try await second.clock.waitForSleeper(sleeping: .seconds(1))
        second.clock.advance(by: .seconds(1))
        guard case .failed(let failure) = try await retried.ending() else { Issue.record("must fail"); return }
        #expect(failure as? RealtimeError == .reconnectAttemptsExhausted(1))
        #expect(other.credentialRequests == [false, false])
    }
}
