import AppSyncEventsWire
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

@Suite("AppSync Events protocol through the scripted server")
struct AppSyncProtocolTests {
    @Test("connects lazily with both subprotocols and connection_init, then subscribes with authorization")
    func handshakeAndSubscribe() async throws {
        let harness = try AppSyncHarness()
        #expect(harness.server.connectionCount == 0)
        let probe = await harness.subscribe("vortex-app/user/u-1/device/*")
        let connection = try await harness.acceptConnection()
        let protocols = connection.request.subprotocols
        #expect(protocols.first == "aws-appsync-event-ws")
        let header = try #require(protocols.last)
        #expect(header.hasPrefix("header-"))
        #expect(!header.contains("=") && !header.contains("+") && !header.contains("/"))
        let decoded = try #require(Base64URL.decode(String(header.dropFirst("header-".count))))
        let auth = try #require(JSONSerialization.jsonObject(with: decoded) as? [String: String])
        #expect(auth == ["host": "abc.appsync-api.us-east-1.amazonaws.com", "Authorization": "jwt-1"])
        #expect(connection.request.url.absoluteString == "wss://abc.appsync-realtime-api.us-east-1.amazonaws.com/event/realtime")

        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "subscribe")
        #expect(frame["id"] as? String == "id-1")
        #expect(frame["channel"] as? String == "vortex-app/user/u-1/device/*")
        #expect(
            frame["authorization"] as? [String: String] == ["host": "abc.appsync-api.us-east-1.amazonaws.com", "Authorization": "jwt-1"])

        connection.emit(#"{"type":"subscribe_success","id":"id-1"}"#)
        #expect(try await probe.next() == .live)
        let event = #"{"eventType":"device/presenceChanged","online":true,"mac":"AA:BB","note":"é 🚀 </tag> \"q\""}"#
        connection.emit(AppSyncHarness.dataFrame(id: "id-1", event: event))
        guard case .payload(let payload) = try await probe.next() else { Issue.record("expected a payload"); return }
        #expect(payload.text == event)
        await harness.transport.disconnect()
        guard case .finished = try await probe.ending() else { Issue.record("disconnect must end streams normally"); return }
        #expect(connection.clientClose?.code == 1000)
    }

    @Test("a subscribe_error fails only that subscription; its sibling stays live")
    func subscribeErrorIsolated() async throws {
        let harness = try AppSyncHarness()
        let good = await harness.subscribe("vortex-app/user/u-1/roleChanged")
        let bad = await harness.subscribe("vortex-app/user/u-2/roleChanged")
        let connection = try await harness.acceptConnection()
        let first = try await AppSyncHarness.expectSubscribe(on: connection, channel: "vortex-app/user/u-1/roleChanged")
        let second = try await AppSyncHarness.expectSubscribe(on: connection, channel: "vortex-app/user/u-2/roleChanged")
        connection.emit(#"{"type":"subscribe_success","id":"\#(first)"}"#)
        connection.emit(
            #"{"type":"subscribe_error","id":"\#(second)","errors":[{"errorType":"BadRequestException","message":"Invalid Channel Format"}]}"#
        )
        guard case .failed(let error) = try await bad.ending() else { Issue.record("the rejected stream must fail"); return }
        #expect(error as? RealtimeError == .subscriptionRejected(errorType: "BadRequestException", message: "Invalid Channel Format"))
        #expect(try await good.next() == .live)
        connection.emit(AppSyncHarness.dataFrame(id: first, event: #"{"reason":"x"}"#))
        #expect(try await good.next() == .payload(RealtimePayload(json: Data(#"{"reason":"x"}"#.utf8))))
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("a data frame whose event is an array of JSON strings (seed documents' shape) delivers each")
    func eventArrayTolerated() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        connection.emit(#"{"type":"data","id":"\#(id)","event":["{\"n\":1}","{\"n\":2}"]}"#)
        _ = try await probe.next()
        _ = try await probe.next()
        _ = try await probe.next()
        #expect(probe.payloadTexts == [#"{"n":1}"#, #"{"n":2}"#])
        await harness.transport.disconnect()
    }

    @Test(
        "data frames are routed by what the JSON says: ids alternating between streams, escapes in type, id and event, the first of repeated keys"
    )
    func dataRoutingFidelity() async throws {
        let harness = try AppSyncHarness()
        let first = await harness.subscribe("default/a")
        let second = await harness.subscribe("default/b")
        let connection = try await harness.acceptConnection()
        let firstID = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        let secondID = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/b")
        #expect(firstID.utf8.count == secondID.utf8.count, "ids of one length, so only their bytes tell them apart")
        connection.emit(#"{"type":"subscribe_success","id":"\#(firstID)"}"#)
        connection.emit(#"{"type":"subscribe_success","id":"\#(secondID)"}"#)
        #expect(try await first.next() == .live)
        #expect(try await second.next() == .live)
        func data(_ id: String, _ n: Int) -> String { AppSyncHarness.dataFrame(id: id, event: #"{"n":\#(n)}"#) }
        connection.emit(data(secondID, 1))
        connection.emit(data(firstID, 2))
        connection.emit(data(secondID, 3))
        let escapedFirstID = String(format: "\\u%04x", try #require(firstID.unicodeScalars.first).value) + firstID.dropFirst()
        connection.emit(#"{"type":"d\u0061ta","id":"\#(escapedFirstID)","event":"{\"n\":4}"}"#)
        connection.emit(#"{"id":"\#(firstID)","type":"data","id":"\#(secondID)","event":"{\"n\":5}","event":"{\"n\":6}"}"#)
        connection.emit(#"{"type":"data","id":"\#(secondID)","event":"{\"n\":\u0037}"}"#)
        func payload(_ n: Int) -> SubscriptionEvent { .payload(RealtimePayload(json: Data(#"{"n":\#(n)}"#.utf8))) }
        for n in [1, 3, 7] { #expect(try await second.next() == payload(n)) }
        for n in [2, 4, 5] { #expect(try await first.next() == payload(n)) }
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("malformed frames, unknown types and stray ids are ignored without harm")
    func robustness() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        for junk in [
            "not json", "[1,2]", #"{"type":42}"#, #"{"id":"x"}"#, #"{"type":"mystery"}"#, #"{"type":"data","id":"nope","event":"{}"}"#,
            #"{"type":"data"}"#, "{\"type\":\"data\",\"id\":\"\(id)\",\"event\":\"\\ud800\"}",
        ] {
            connection.emit(junk)
        }
        connection.emit(AppSyncHarness.dataFrame(id: id, event: #"{"ok":true}"#))
        #expect(try await probe.next() == .live)
        // The data frame with an unreadable event for this subscription is a reported loss, not a silent one.
        guard case .lost(let loss) = try await probe.next() else { Issue.record("expected a loss report"); return }
        #expect(loss.count == 1 && loss.reason == .undecodable)
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data(#"{"ok":true}"#.utf8))))
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("broadcast_error reaches the subscription as a reported loss, in order; the subscription stays live")
    func broadcastErrorIsAReportedLoss() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        connection.emit(AppSyncHarness.dataFrame(id: id, event: "1"))
        connection.emit(#"{"type":"broadcast_error","id":"\#(id)","errors":[{"errorType":"LimitExceededError","message":"dropped"}]}"#)
        connection.emit(AppSyncHarness.dataFrame(id: id, event: "2"))
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data("1".utf8))))
        guard case .lost(let loss) = try await probe.next() else { Issue.record("expected a loss report"); return }
        #expect(loss.reason == .serverError && loss.count == 1)
        #expect(loss.window.start < loss.window.end, "the window starts a safety margin before the report")
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data("2".utf8))))
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("a broadcast_error without an id is a reported loss for every subscription on the link")
    func broadcastErrorWithoutID() async throws {
        let harness = try AppSyncHarness()
        let first = await harness.subscribe("default/a")
        let second = await harness.subscribe("default/b")
        let connection = try await harness.acceptConnection()
        for channel in ["default/a", "default/b"] {
            let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: channel)
            connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        }
        #expect(try await first.next() == .live)
        #expect(try await second.next() == .live)
        connection.emit(#"{"type":"broadcast_error","errors":[{"errorType":"LimitExceededError","message":"dropped"}]}"#)
        for probe in [first, second] {
            guard case .lost(let loss) = try await probe.next() else { Issue.record("expected a loss report"); return }
            #expect(loss.reason == .serverError && loss.count == 1)
        }
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("cancelling a stream sends unsubscribe; the last one closes the connection")
    func cancelUnsubscribesAndClosesWhenIdle() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        probe.cancel()
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "unsubscribe")
        #expect(frame["id"] as? String == id)
        let close = try await connection.waitForClientClose()
        #expect(close.code == 1000)
        let states = await harness.transport.connectionStates()
        var iterator = states.makeAsyncIterator()
        var last = await iterator.next()
        while last != .idle { last = await iterator.next() }
        #expect(last == .idle)
    }

    @Test("a stream cancelled before connection_ack: the link closes once acknowledged, nothing is subscribed")
    func cancelledBeforeAck() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.server.nextConnection()
        #expect(try await connection.nextSentJSON()["type"] as? String == "connection_init")
        probe.cancel()
        let transport = harness.transport
        try await withTestTimeout(scriptedWait, "the cancellation") {
            while await transport.subscriptionCount > 0 { try await TestTime.pollPause() }
        }
        connection.emit(#"{"type":"connection_ack"}"#)
        let close = try await connection.waitForClientClose()
        #expect(close.code == 1000 && close.reason == "idle")
        #expect(!connection.sentTexts.contains { $0.contains(#""subscribe""#) })
    }

    @Test("a live subscription revoked as unauthorized is subscribed again with refreshed credentials and resumes with its gap")
    func revokedLiveSubscription() async throws {
        let auth = ScriptedAuthSession(.bearerToken("jwt-1"))
        let harness = try AppSyncHarness(auth: auth)
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        for round in 1...2 {
            harness.clock.advance(by: .seconds(5))
            auth.setCredentials(.bearerToken("jwt-\(round + 1)"))
            connection.emit(#"{"type":"subscribe_error","id":"\#(id)","errors":[{"errorType":"UnauthorizedException"}]}"#)
            let frame = try await connection.nextSentJSON()
            #expect(frame["type"] as? String == "subscribe" && frame["id"] as? String == id)
            #expect(
                frame["authorization"] as? [String: String] == [
                    "host": "abc.appsync-api.us-east-1.amazonaws.com", "Authorization": "jwt-\(round + 1)",
                ])
            #expect(auth.credentialRequests.last == true, "refreshed")
            harness.clock.advance(by: .seconds(1))
            connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
            // From the refusal (5 s after the last confirmation) minus the 2 s margin, to the confirmation.
            let start = Date(timeIntervalSince1970: 1_700_000_000 + Double(6 * round - 3))
            #expect(try await probe.next() == .resumed(gap: GapWindow(start: start, end: start.addingTimeInterval(3))))
        }
        #expect(probe.currentEnding == nil, "live again: a later refusal is retried too")
        await harness.transport.disconnect()
    }

    @Test("a subscription limit of N refuses the N+1st without sending it")
    func subscriptionLimit() async throws {
        let harness = try AppSyncHarness { $0.maxSubscriptions = 3 }
        var probes: [SubscriptionProbe] = []
        for index in 0..<3 { probes.append(await harness.subscribe("default/c\(index)")) }
        let extra = await harness.subscribe("default/c3")
        guard case .failed(let error) = try await extra.ending() else { Issue.record("the 4th must fail"); return }
        #expect(error as? RealtimeError == .subscriptionLimitReached(3))
        let connection = try await harness.acceptConnection()
        for index in 0..<3 { _ = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/c\(index)") }
        #expect(AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(AppSyncHarness.endpointText)).maxSubscriptions == 200)
        await harness.transport.disconnect()
    }

    @Test("the service's MaxSubscriptionsReachedError maps to subscriptionLimitReached(200)")
    func serviceLimitError() async throws {
        let harness = try AppSyncHarness()
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_error","id":"\#(id)","errors":[{"errorType":"MaxSubscriptionsReachedError"}]}"#)
        guard case .failed(let error) = try await probe.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .subscriptionLimitReached(200))
        await harness.transport.disconnect()
    }

    @Test("invalid channels and GraphQL topics fail the stream before anything is sent")
    func invalidRequests() async throws {
        let harness = try AppSyncHarness()
        let states = await StateRecorder(harness.transport)
        let wildcardNamespace = await harness.subscribe("*")
        let graphQL = SubscriptionProbe(await harness.transport.subscribe(.graphQL(GraphQLOperation(query: "subscription { x }"))))
        guard case .failed(let first) = try await wildcardNamespace.ending(), case .failed(let second) = try await graphQL.ending() else {
            Issue.record("both must fail"); return
        }
        #expect(first is RealtimeError)
        if case .invalidChannel = first as? RealtimeError {} else { Issue.record("expected invalidChannel, got \(first)") }
        if case .unsupported = second as? RealtimeError {} else { Issue.record("expected unsupported, got \(second)") }
        // disconnect() returns once whatever the transport started has ended: had it tried to connect, the server would
        // have the connection and the states a `connecting` before the final `disconnected`.
        await harness.transport.disconnect()
        try await states.waitFor(.disconnected(.requested))
        #expect(harness.server.connectionCount == 0)
        #expect(!states.recorded.contains(.connecting), "\(states.recorded)")
    }

    @Test("no log line contains the token, API key or signature")
    func secretsNeverLogged() async throws {
        let logs = CapturedLog()
        let harness = try AppSyncHarness(auth: ScriptedAuthSession(.bearerToken("SECRET-JWT-123")), logHandler: logs)
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection()
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        connection.emit(#"{"type":"connection_error","errors":[{"errorType":"BadRequestException","message":"m"}]}"#)
        _ = try await connection.waitForClientClose()
        await harness.transport.disconnect()
        #expect(!logs.captured.isEmpty)
        #expect(logs.captured.allSatisfy { !$0.contains("SECRET-JWT-123") && !$0.contains("header-") })
    }
}
