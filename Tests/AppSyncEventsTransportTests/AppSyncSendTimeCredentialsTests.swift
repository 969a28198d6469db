import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

/// Issue 19 item 1 through the scripted server: every subscribe and publish is authorized with the credentials the
/// session gives when it is sent, an unauthorized refusal is retried once with refreshed credentials, and a second
/// refusal fails only that subscription or publish.
@Suite("AppSync Events: credentials at send time")
struct AppSyncSendTimeCredentialsTests {
    /// The `Authorization` of a frame's auth object.
    private static func token(_ frame: [String: Any]) -> String? {
        (frame["authorization"] as? [String: String])?["Authorization"]
    }

    /// A live subscription on `channel` on an acknowledged connection.
    private func live(
        _ harness: AppSyncHarness, _ channel: String = "default/a"
    ) async throws -> (SubscriptionProbe, ScriptedConnection, String) {
        let probe = await harness.subscribe(channel)
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: channel)
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        return (probe, connection, id)
    }

    private static func payload(_ json: String) -> SubscriptionEvent { .payload(RealtimePayload(json: Data(json.utf8))) }

    @Test("a second subscribe and a publish after the token changed carry the new token, on the same connection")
    func laterMessagesCarryTheCurrentToken() async throws {
        let harness = try AppSyncHarness()
        let (first, connection, firstID) = try await live(harness)
        let connectHeader = try #require(connection.request.subprotocols.last)
        harness.auth.setCredentials(.bearerToken("jwt-2"))

        let second = await harness.subscribe("default/b")
        let subscribe = try await connection.nextSentJSON()
        #expect(subscribe["channel"] as? String == "default/b")
        #expect(Self.token(subscribe) == "jwt-2")
        let secondID = try #require(subscribe["id"] as? String)
        connection.emit(#"{"type":"subscribe_success","id":"\#(secondID)"}"#)
        #expect(try await second.next() == .live)

        harness.auth.setCredentials(.bearerToken("jwt-3"))
        let transport = harness.transport
        let published = Task { try await transport.publish(PublishRequest(channel: "default/c", events: ["1"])) }
        let publish = try await connection.nextSentJSON()
        #expect(publish["type"] as? String == "publish")
        #expect(Self.token(publish) == "jwt-3")
        let publishID = try #require(publish["id"] as? String)
        connection.emit(#"{"type":"publish_success","id":"\#(publishID)","successful":[{"identifier":"e","index":0}],"failed":[]}"#)
        #expect(try await published.boundedValue().allSucceeded)

        connection.emit(AppSyncHarness.dataFrame(id: firstID, event: "1"))
        #expect(try await first.next() == Self.payload("1"))
        #expect(harness.server.connectionCount == 1)
        #expect(connection.request.subprotocols.last == connectHeader, "the connection itself is not re-authorized")
        // Connect, then one request per batch: the first subscribe, the second, the publish.
        #expect(harness.auth.credentialRequests == [false, false, false, false])
        await transport.disconnect()
    }

    @Test("IAM: each batch is signed with the credentials of that moment")
    func iamSignsWithCurrentCredentials() async throws {
        let first = AWSCredentials(accessKeyID: "AKIDFIRST", secretAccessKey: "secret-1", region: "us-east-1")
        let second = AWSCredentials(accessKeyID: "AKIDSECOND", secretAccessKey: "secret-2", sessionToken: "session-2", region: "us-east-1")
        let harness = try AppSyncHarness(auth: ScriptedAuthSession(.iam(first)))
        let (_, connection, _) = try await live(harness)
        harness.auth.setCredentials(.iam(second))
        _ = await harness.subscribe("default/b")
        let frame = try await connection.nextSentJSON()
        let authorization = try #require(frame["authorization"] as? [String: String])
        #expect(authorization["Authorization"]?.contains("Credential=AKIDSECOND/") == true)
        #expect(authorization["x-amz-security-token"] == "session-2")
        await harness.transport.disconnect()
    }

    @Test("credentials are asked for once per batch of messages, not per message")
    func oneRequestPerBatch() async throws {
        let harness = try AppSyncHarness()
        let probes = [await harness.subscribe("default/a"), await harness.subscribe("default/b"), await harness.subscribe("default/c")]
        let connection = try await harness.acceptConnection()
        for channel in ["default/a", "default/b", "default/c"] {
            _ = try await AppSyncHarness.expectSubscribe(on: connection, channel: channel)
        }
        #expect(harness.auth.credentialRequests == [false, false], "connect, then one batch of three subscribes")

        // Hold the next batch's request; two more subscribes arrive meanwhile and go out together in the batch after it.
        harness.auth.holdCredentials()
        let d = await harness.subscribe("default/d")
        try await harness.auth.waitForHeldCalls(1)
        let e = await harness.subscribe("default/e")
        let f = await harness.subscribe("default/f")
        harness.auth.releaseCredentials()
        for channel in ["default/d", "default/e", "default/f"] {
            _ = try await AppSyncHarness.expectSubscribe(on: connection, channel: channel)
        }
        #expect(harness.auth.credentialRequests == [false, false, false, false])
        _ = (probes, d, e, f)
        await harness.transport.disconnect()
    }

    static let authRefusals: [(type: String, errors: String)] = [
        ("subscribe_error", #"[{"errorType":"UnauthorizedException","message":"Token expired"}]"#),
        ("subscribe_error", #"[{"errorType":"Unauthorized"}]"#),
        ("subscribe_error", #"[{"errorType":"NotAuthorizedException","message":"x"}]"#),
        ("subscribe_error", #"[{"errorType":"AuthorizationError","message":"x"}]"#),
        ("subscribe_error", #"[{"errorType":"ForbiddenException","message":"x"}]"#),
        ("subscribe_error", #"[{"errorType":"BadRequestException","message":"Token expired at 12:00"}]"#),
        ("error", #"[{"errorType":"UnauthorizedException","message":"Token expired"}]"#),
    ]

    @Test(
        "a subscribe refused as unauthorized is sent again once, same id, with forceRefresh credentials, and goes live",
        arguments: authRefusals)
    func unauthorizedSubscribeRetried(type: String, errors: String) async throws {
        let harness = try AppSyncHarness()
        let (sibling, connection, siblingID) = try await live(harness)
        let probe = await harness.subscribe("default/b")
        let first = try await connection.nextSentJSON()
        let id = try #require(first["id"] as? String)
        #expect(Self.token(first) == "jwt-1")
        harness.auth.setCredentials(.bearerToken("jwt-2"))
        connection.emit(#"{"type":"\#(type)","id":"\#(id)","errors":\#(errors)}"#)
        let retry = try await connection.nextSentJSON()
        #expect(retry["type"] as? String == "subscribe")
        #expect(retry["id"] as? String == id)
        #expect(retry["channel"] as? String == "default/b")
        #expect(Self.token(retry) == "jwt-2")
        #expect(harness.auth.credentialRequests.last == true, "the retry forces a refresh")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        connection.emit(AppSyncHarness.dataFrame(id: siblingID, event: "1"))
        #expect(try await sibling.next() == Self.payload("1"))
        #expect(connection.clientClose == nil && harness.server.connectionCount == 1)
        await harness.transport.disconnect()
    }

    @Test("refused again after the refresh: only that stream fails, naming the channel; siblings deliver; no close, no reconnect")
    func refusedTwiceFailsOnlyThatSubscription() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        let (sibling, connection, siblingID) = try await live(harness)
        let probe = await harness.subscribe("vortex-app/user/u-1/roleChanged")
        for _ in 0..<2 {
            let frame = try await connection.nextSentJSON()
            #expect(frame["type"] as? String == "subscribe")
            let id = try #require(frame["id"] as? String)
            connection.emit(
                #"{"type":"subscribe_error","id":"\#(id)","errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#)
        }
        guard case .failed(let error) = try await probe.ending() else { Issue.record("the refused stream must fail"); return }
        #expect(
            error as? RealtimeError
                == .subscriptionRejected(
                    errorType: "UnauthorizedException",
                    message: "channel vortex-app/user/u-1/roleChanged refused after refreshing credentials: Token expired"))
        #expect("\(error)".contains("vortex-app/user/u-1/roleChanged") && "\(error)".contains("Token expired"))
        #expect(harness.auth.credentialRequests == [false, false, false, true], "one retry, with forceRefresh")
        connection.emit(AppSyncHarness.dataFrame(id: siblingID, event: "2"))
        #expect(try await sibling.next() == Self.payload("2"))
        #expect(connection.clientClose == nil && !connection.isClosed)
        #expect(harness.server.connectionCount == 1)
        #expect(!states.recorded.contains { if case .reconnecting = $0 { true } else { false } })
        // A later subscription has a retry of its own.
        let later = await harness.subscribe("default/c")
        let laterID = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/c")
        connection.emit(#"{"type":"subscribe_error","id":"\#(laterID)","errors":[{"errorType":"UnauthorizedException"}]}"#)
        #expect(try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/c") == laterID)
        connection.emit(#"{"type":"subscribe_success","id":"\#(laterID)"}"#)
        #expect(try await later.next() == .live)
        await harness.transport.disconnect()
    }

    @Test("a subscribe refused for another reason fails at once, without a refresh")
    func otherRefusalsAreNotRetried() async throws {
        let harness = try AppSyncHarness()
        let (_, connection, _) = try await live(harness)
        let probe = await harness.subscribe("default/b")
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/b")
        connection.emit(
            #"{"type":"subscribe_error","id":"\#(id)","errors":[{"errorType":"BadRequestException","message":"Invalid Channel Format"}]}"#)
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .subscriptionRejected(errorType: "BadRequestException", message: "Invalid Channel Format"))
        #expect(!harness.auth.credentialRequests.contains(true))
        await harness.transport.disconnect()
    }

    @Test("a live subscription refused after a reconnect gets its retry again")
    func retryBudgetResetsWhenLive() async throws {
        let harness = try AppSyncHarness()
        let (probe, first, id) = try await live(harness)
        let refusal =
            #"{"type":"subscribe_error","id":"\#(id)","errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == id)
        second.emit(refusal)
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == id)
        second.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        guard case .resumed = try await probe.next() else { Issue.record("expected resumed"); return }
        second.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let third = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: third, channel: "default/a") == id)
        third.emit(refusal)
        #expect(try await AppSyncHarness.expectSubscribe(on: third, channel: "default/a") == id, "retried again: it was live in between")
        third.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        guard case .resumed = try await probe.next() else { Issue.record("expected resumed"); return }
        await harness.transport.disconnect()
    }

    @Test("a WebSocket publish refused as unauthorized is sent again with refreshed credentials")
    func unauthorizedPublishRetried() async throws {
        let harness = try AppSyncHarness()
        let (_, connection, _) = try await live(harness)
        let transport = harness.transport
        let published = Task { try await transport.publish(PublishRequest(channel: "default/p", events: ["1"])) }
        let first = try await connection.nextSentJSON()
        let id = try #require(first["id"] as? String)
        harness.auth.setCredentials(.bearerToken("jwt-2"))
        connection.emit(
            #"{"type":"publish_error","id":"\#(id)","errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#)
        let retry = try await connection.nextSentJSON()
        #expect(retry["type"] as? String == "publish" && retry["id"] as? String == id)
        #expect(Self.token(retry) == "jwt-2")
        #expect(harness.auth.credentialRequests.last == true)
        connection.emit(#"{"type":"publish_success","id":"\#(id)","successful":[{"identifier":"e","index":0}],"failed":[]}"#)
        #expect(try await published.boundedValue().successful.count == 1)
        await transport.disconnect()
    }

    @Test("a WebSocket publish refused twice fails alone, naming the channel; the connection and its subscriptions carry on")
    func publishRefusedTwice() async throws {
        let harness = try AppSyncHarness()
        let (sibling, connection, siblingID) = try await live(harness)
        let transport = harness.transport
        let published = Task { try await transport.publish(PublishRequest(channel: "default/p", events: ["1"])) }
        for frameType in ["publish_error", "error"] {
            let frame = try await connection.nextSentJSON()
            #expect(frame["type"] as? String == "publish")
            let id = try #require(frame["id"] as? String)
            connection.emit(
                #"{"type":"\#(frameType)","id":"\#(id)","errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#)
        }
        await #expect(
            throws: RealtimeError.publishRejected(
                errorType: "UnauthorizedException", message: "channel default/p refused after refreshing credentials: Token expired")
        ) { try await published.boundedValue() }
        connection.emit(AppSyncHarness.dataFrame(id: siblingID, event: "3"))
        #expect(try await sibling.next() == Self.payload("3"))
        #expect(connection.clientClose == nil && harness.server.connectionCount == 1)
        await transport.disconnect()
    }

    @Test("a WebSocket publish refused for another reason fails at once")
    func publishOtherRefusalNotRetried() async throws {
        let harness = try AppSyncHarness()
        let (_, connection, _) = try await live(harness)
        let transport = harness.transport
        let published = Task { try await transport.publish(PublishRequest(channel: "default/p", events: ["1"])) }
        let id = try #require(try await connection.nextSentJSON()["id"] as? String)
        connection.emit(#"{"type":"publish_error","id":"\#(id)","errors":[{"errorType":"BadRequestException","message":"no"}]}"#)
        await #expect(throws: RealtimeError.publishRejected(errorType: "BadRequestException", message: "no")) {
            try await published.boundedValue()
        }
        #expect(!harness.auth.credentialRequests.contains(true))
        await transport.disconnect()
    }

    @Test("a subscription cancelled while its credentials are fetched is never sent (nor unsubscribed)")
    func cancelledDuringFetch() async throws {
        let harness = try AppSyncHarness()
        let (_, connection, _) = try await live(harness)
        harness.auth.holdCredentials()
        let doomed = await harness.subscribe("default/b")
        try await harness.auth.waitForHeldCalls(1)
        doomed.cancel()
        try await withTestTimeout(5, "the cancelled subscription to go") {
            while await harness.transport.subscriptionCount > 1 { try await TestTime.pollPause() }
        }
        harness.auth.releaseCredentials()
        _ = await harness.subscribe("default/c")
        let next = try await connection.nextSentJSON()
        #expect(next["type"] as? String == "subscribe" && next["channel"] as? String == "default/c", "default/b was dropped: \(next)")
        #expect(connection.sentTexts.count == 3, "connection_init, default/a, default/c: \(connection.sentTexts)")
        await harness.transport.disconnect()
    }

    @Test("a session silent for a subscribe past the ack timeout: the link is replaced; the subscribe goes out on the next")
    func hungSendTimeCredentialsReplaceTheLink() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        let (_, first, id) = try await live(harness)
        harness.auth.holdCredentials()  // ignores cancellation, as a hung identity provider would
        let waiting = await harness.subscribe("default/b")
        try await harness.auth.waitForHeldCalls(1)
        try await harness.clock.waitForSleeper(sleeping: .seconds(15))
        harness.clock.advance(by: .seconds(15))
        try await states.waitFor(.reconnecting(attempt: 1, delay: .seconds(10)))
        #expect(first.clientClose?.code == 1000)
        #expect(harness.transport.lastConnectionFailure?.hasPrefix("the AuthSession gave no credentials within 15.0 seconds") == true)
        harness.auth.releaseCredentials()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == id)
        let waitingID = try await AppSyncHarness.expectSubscribe(on: second, channel: "default/b")
        second.emit(#"{"type":"subscribe_success","id":"\#(waitingID)"}"#)
        #expect(try await waiting.next() == .live)
        await harness.transport.disconnect()
    }

    @Test("disconnect while a credentials call hangs (ignoring cancellation) returns at once")
    func disconnectDuringHungFetch() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.server.nextConnection()
        _ = try await connection.nextSentJSON()
        harness.auth.holdCredentials()
        connection.emit(#"{"type":"connection_ack"}"#)
        try await harness.auth.waitForHeldCalls(1)
        let transport = harness.transport
        try await withTestTimeout(5, "disconnect to return") { await transport.disconnect() }
        guard case .finished = try await probe.ending() else { Issue.record("disconnect ends streams normally"); return }
        #expect(connection.clientClose?.code == 1000)
        #expect(connection.sentTexts.count == 1, "nothing but connection_init: \(connection.sentTexts)")
        harness.auth.releaseCredentials()
    }

    @Test("the link ends while its batch waits for credentials: the subscribe goes out on the next link")
    func linkEndsDuringFetch() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let first = try await harness.server.nextConnection()
        _ = try await first.nextSentJSON()
        harness.auth.holdCredentials()
        first.emit(#"{"type":"connection_ack"}"#)
        try await harness.auth.waitForHeldCalls(1)
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.auth.releaseCredentials()
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == "id-1")
        second.emit(#"{"type":"subscribe_success","id":"id-1"}"#)
        #expect(try await probe.next() == .live)
        #expect(first.sentTexts.count == 1, "nothing was sent on the dead link: \(first.sentTexts)")
        await harness.transport.disconnect()
    }

    private struct IdentityProviderDown: Error, CustomStringConvertible {
        var description: String { "identity provider down" }
    }

    @Test("credentials that cannot be had fail that subscribe and publish with sessionExpired; the connection carries on")
    func credentialsUnavailable() async throws {
        let harness = try AppSyncHarness()
        let (sibling, connection, siblingID) = try await live(harness)
        harness.auth.failCredentials(with: IdentityProviderDown())
        let probe = await harness.subscribe("default/b")
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired(let detail) = error as? RealtimeError else {
            Issue.record("expected sessionExpired, got \(error)"); return
        }
        #expect(detail.contains("default/b") && detail.contains("identity provider down"))
        let transport = harness.transport
        await #expect(throws: RealtimeError.self) { try await transport.publish(PublishRequest(channel: "default/p", events: ["1"])) }
        harness.auth.failCredentials(with: nil)
        connection.emit(AppSyncHarness.dataFrame(id: siblingID, event: "4"))
        #expect(try await sibling.next() == Self.payload("4"))
        #expect(connection.sentTexts.count == 2 && connection.clientClose == nil)
        await transport.disconnect()
    }

    /// A live subscription, its connection lost, and the next one opened with the session throwing from its
    /// acknowledgement on: the re-subscribe's credentials throw.
    private func resubscribeThrows(_ harness: AppSyncHarness) async throws -> (SubscriptionProbe, ScriptedConnection, String) {
        let (probe, first, id) = try await live(harness)
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.server.nextConnection()
        #expect(try await second.nextSentJSON()["type"] as? String == "connection_init")
        harness.auth.failCredentials(with: IdentityProviderDown())
        second.emit(#"{"type":"connection_ack"}"#)
        return (probe, second, id)
    }

    @Test(
        "the session throws once for a live subscription's re-subscribe after a reconnect: the link is replaced, it resumes",
        .timeLimit(.minutes(2)))
    func unavailableForLiveResubscribeReplacesTheLink() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        let (probe, second, id) = try await resubscribeThrows(harness)
        try await states.waitFor(.reconnecting(attempt: 2, delay: .seconds(10)))
        harness.auth.failCredentials(with: nil)
        #expect(second.clientClose?.code == 1000)
        #expect(second.sentTexts.count == 1, "nothing but connection_init: \(second.sentTexts)")
        #expect(probe.currentEnding == nil, "the stream carries on")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let third = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: third, channel: "default/a") == id)
        third.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        guard case .resumed = try await probe.next() else { Issue.record("expected resumed"); return }
        await harness.transport.disconnect()
    }

    @Test(
        "a session that keeps throwing for a live subscription ends it with sessionExpired after the bounded retries",
        .timeLimit(.minutes(2)))
    func unavailableForLiveResubscribeIsBounded() async throws {
        let harness = try AppSyncHarness()
        let (probe, _, _) = try await resubscribeThrows(harness)
        // The lost link's backoff, then one per connect whose credentials throw until the retries run out.
        for _ in 0...ReconnectBookkeeping.credentialsRetries {
            try await harness.clock.waitForSleeper(sleeping: .seconds(10))
            harness.clock.advance(by: .seconds(10))
        }
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired(let detail) = error as? RealtimeError else {
            Issue.record("expected sessionExpired, got \(error)"); return
        }
        #expect(detail.contains("identity provider down"))
        #expect(harness.server.connectionCount == 2, "no connection opens without credentials")
    }

    @Test(
        "a session that throws only for the re-subscribe (a forced refresh, say) ends it with sessionExpired after the bounded retries",
        .timeLimit(.minutes(2)))
    func unavailableOnlyForResubscribeIsBounded() async throws {
        let harness = try AppSyncHarness()
        var (probe, link, _) = try await resubscribeThrows(harness)
        // Each connect gets credentials; each re-subscribe's throw replaces the link, until the retries run out.
        for _ in 0..<ReconnectBookkeeping.credentialsRetries {
            _ = try await link.waitForClientClose()
            harness.auth.failCredentials(with: nil)
            try await harness.clock.waitForSleeper(sleeping: .seconds(10))
            harness.clock.advance(by: .seconds(10))
            link = try await harness.server.nextConnection()
            #expect(try await link.nextSentJSON()["type"] as? String == "connection_init")
            harness.auth.failCredentials(with: IdentityProviderDown())
            link.emit(#"{"type":"connection_ack"}"#)
        }
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        guard case .sessionExpired(let detail) = error as? RealtimeError else {
            Issue.record("expected sessionExpired, got \(error)"); return
        }
        #expect(detail.contains("identity provider down"))
        #expect(harness.server.connectionCount == 2 + ReconnectBookkeeping.credentialsRetries)
    }

    @Test(
        "the session throws for a rotation's move of a live subscription: the successor is given up, the old link delivers",
        .timeLimit(.minutes(2)))
    func unavailableForRotationKeepsTheOldLink() async throws {
        let harness = try AppSyncHarness { configuration in
            configuration.maxConnectionDuration = .seconds(100)
            configuration.rotationLead = .seconds(10)
            configuration.link.liveness.quietPeriod = nil
        }
        let (probe, old, id) = try await live(harness)
        try await harness.clock.waitForSleeper(sleeping: .seconds(90))
        harness.clock.advance(by: .seconds(90))
        let successor = try await harness.server.nextConnection()
        #expect(try await successor.nextSentJSON()["type"] as? String == "connection_init")
        harness.auth.failCredentials(with: IdentityProviderDown())
        successor.emit(#"{"type":"connection_ack"}"#)
        _ = try await successor.waitForClientClose()
        #expect(successor.sentTexts.count == 1, "nothing but connection_init: \(successor.sentTexts)")
        old.emit(AppSyncHarness.dataFrame(id: id, event: "5"))
        #expect(try await probe.next() == Self.payload("5"))
        #expect(probe.currentEnding == nil && !old.isClosed)
        await harness.transport.disconnect()
    }

    @Test("signed out: a new subscribe fails with signedOut and nothing is sent")
    func signedOutAtSendTime() async throws {
        let harness = try AppSyncHarness()
        let (_, connection, _) = try await live(harness)
        harness.auth.setSignedIn(false)
        let probe = await harness.subscribe("default/b")
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .signedOut)
        #expect(connection.sentTexts.count == 2)
        await harness.transport.disconnect()
    }
}

/// An ``HTTPClient`` answering with scripted replies in order (the last repeats) and recording each request.
private final class ScriptedHTTPClient: HTTPClient {
    private let replies: Locked<[(Int, String)]>
    private let recorded = Locked<[[String: String]]>([])

    init(_ replies: [(Int, String)]) { self.replies = Locked(replies) }

    /// The headers of every request, in order.
    var requests: [[String: String]] { recorded.withLock { $0 } }

    func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data) {
        recorded.withLock { $0.append(headers) }
        let (status, text) = replies.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        return (status, Data(text.utf8))
    }
}

/// One HTTP publish case: the server's replies, and what the publish must do.
struct HTTPRefusalCase: Sendable, CustomTestStringConvertible {
    var name: String
    var replies: [(Int, String)]
    var requests: Int
    /// `nil`: the publish succeeds.
    var error: RealtimeError?
    var testDescription: String { name }
}

@Suite("AppSync Events: HTTP publish with credentials at send time")
struct AppSyncHTTPPublishCredentialsTests {
    static let ok = (200, #"{"successful":[{"identifier":"e","index":0}],"failed":[]}"#)
    static let expired = (401, #"{"errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#)

    static let cases: [HTTPRefusalCase] = [
        .init(name: "accepted at once", replies: [ok], requests: 1, error: nil),
        .init(name: "401, then accepted", replies: [expired, ok], requests: 2, error: nil),
        .init(name: "403 without a body, then accepted", replies: [(403, ""), ok], requests: 2, error: nil),
        .init(
            name: "400 with an auth error, then accepted",
            replies: [(400, #"{"errors":[{"errorType":"UnauthorizedException","message":"x"}]}"#), ok], requests: 2, error: nil),
        .init(
            name: "401 twice", replies: [expired, expired], requests: 2,
            error: .publishRejected(
                errorType: "UnauthorizedException", message: "channel default/p refused after refreshing credentials: Token expired")),
        .init(
            name: "403 twice, without a body", replies: [(403, "")], requests: 2,
            error: .publishRejected(errorType: "HTTP 403", message: "channel default/p refused after refreshing credentials: HTTP 403")),
        .init(
            name: "400 bad request: no retry",
            replies: [(400, #"{"errors":[{"errorType":"BadRequestException","message":"too big"}]}"#)], requests: 1,
            error: .publishRejected(errorType: "BadRequestException", message: "too big")),
        .init(
            name: "500: no retry", replies: [(500, "oops")], requests: 1, error: .publishRejected(errorType: "HTTP 500", message: "oops")),
    ]

    @Test("an HTTP publish refused as unauthorized is retried once with refreshed credentials", arguments: cases)
    func refusals(testCase: HTTPRefusalCase) async throws {
        let client = ScriptedHTTPClient(testCase.replies)
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"), .bearerToken("jwt-2"))
        var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(AppSyncHarness.endpointText))
        configuration.publishRoute = .http
        let transport = AppSyncEventsTransport(
            configuration: configuration, auth: auth, connector: ScriptedWebSocketServer(), httpClient: client)
        let request = PublishRequest(channel: "default/p", events: ["1"])
        if let expected = testCase.error {
            await #expect(throws: expected) { try await transport.publish(request) }
        } else {
            #expect(try await transport.publish(request).successful.count == 1)
        }
        #expect(client.requests.count == testCase.requests)
        #expect(client.requests.map { $0["Authorization"] } == Array(["jwt-1", "jwt-2"].prefix(testCase.requests)))
        #expect(auth.credentialRequests == Array([false, true].prefix(testCase.requests)))
    }

    @Test("a signed-out session publishes nothing over HTTP")
    func signedOut() async throws {
        let client = ScriptedHTTPClient([Self.ok])
        let auth = ScriptedAuthSession()
        auth.setSignedIn(false)
        var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(AppSyncHarness.endpointText))
        configuration.publishRoute = .http
        let transport = AppSyncEventsTransport(
            configuration: configuration, auth: auth, connector: ScriptedWebSocketServer(), httpClient: client)
        await #expect(throws: RealtimeError.signedOut) { try await transport.publish(PublishRequest(channel: "default/p", events: ["1"])) }
        #expect(client.requests.isEmpty)
    }
}
