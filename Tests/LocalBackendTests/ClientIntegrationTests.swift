import AppSyncEventsTransport
import Foundation
import LocalBackend
import RealtimeTesting
import SubscriberCore
import Testing
import VortexVocabulary
import WebSocketNIO

/// The real client, `AppSyncEventsTransport` with its default `NIOWebSocketConnector`, against the real server.
@Suite("AppSyncEventsTransport against the local backend", .serialized)
struct ClientIntegrationTests {
    func transport(
        _ backend: Backend, _ auth: any AuthSession, _ configure: (inout AppSyncEventsConfiguration) -> Void = { _ in }
    ) -> AppSyncEventsTransport {
        var configuration = AppSyncEventsConfiguration(endpoint: backend.endpoint)
        configuration.link.reconnectPolicy = .fixed(.milliseconds(100))
        configuration.link.ackTimeout = .seconds(5)
        configure(&configuration)
        return AppSyncEventsTransport(configuration: configuration, auth: auth, connector: NIOWebSocketConnector(), logger: testLogger)
    }

    /// Waits until `probe` yields `.live`.
    func expectLive(_ probe: SubscriptionProbe, _ comment: Comment? = nil) async throws {
        let first = try await probe.next()
        #expect(first == .live, comment)
    }

    /// The next payload of `probe`, skipping `.live` / `.resumed`.
    func nextPayload(_ probe: SubscriptionProbe, timeout: Double = scriptedWait) async throws -> String {
        while true {
            if case .payload(let payload) = try await probe.next(timeout: timeout) { return payload.text }
        }
    }

    @Test("subscribe and publish both ways: server → client events, client → server publishes over WebSocket and HTTP")
    func bothWays() async throws {
        try await withBackend { backend in
            let client = transport(backend, StaticAuthSession(TestCredentials.jwt("u-1")))
            let devices = SubscriptionProbe(await client.subscribe(.channel("vortex-app/user/u-1/device/*")))
            try await expectLive(devices)
            let summary = await backend.server.bus.publish(
                DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["thingName": "cam-1", "online": true]))
            #expect(summary.deliveredTo.contains("u-1"))
            let event = try JSONDecoder().decode([String: JSONValue].self, from: Data(try await nextPayload(devices).utf8))
            #expect(event["eventType"] == "device/presenceChanged")
            #expect(event["online"] == true)

            let listener = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await listener.subscribe("default/chat/*", id: "chat")["type"] as? String == "subscribe_success")
            let overWebSocket = try await client.publish(
                PublishRequest(channel: "default/chat/ws", events: [#"{"via":"ws","html":"<i>"}"#]))
            #expect(overWebSocket.allSucceeded && overWebSocket.successful.count == 1)
            #expect(try await listener.socket.nextSkippingKeepAlive()["event"] as? String == #"{"via":"ws","html":"<i>"}"#)

            let httpClient = transport(backend, StaticAuthSession(TestCredentials.iam)) { $0.publishRoute = .http }
            let overHTTP = try await httpClient.publish(PublishRequest(channel: "default/chat/http", events: [#"{"via":"http"}"#, "2"]))
            #expect(overHTTP.successful.map(\.index) == [0, 1])
            #expect(try await listener.socket.nextSkippingKeepAlive()["event"] as? String == #"{"via":"http"}"#)
            #expect(try await listener.socket.nextSkippingKeepAlive()["event"] as? String == "2")

            await listener.close()
            await client.disconnect()
            await httpClient.disconnect()
        }
    }

    @Test("per-user authorization: a foreign channel is rejected alone; the user's own subscription keeps delivering")
    func perUser() async throws {
        try await withBackend { backend in
            let client = transport(backend, StaticAuthSession(TestCredentials.jwt("u-1")))
            let own = SubscriptionProbe(await client.subscribe(.channel("vortex-app/user/u-1/*")))
            let foreign = SubscriptionProbe(await client.subscribe(.channel("vortex-app/user/u-2/*")))
            try await expectLive(own)
            guard case .failed(let error) = try await foreign.ending() else {
                Issue.record("the foreign subscription should fail")
                return
            }
            #expect(
                error as? RealtimeError
                    == .subscriptionRejected(
                        errorType: "UnauthorizedException",
                        message:
                            "channel vortex-app/user/u-2/* refused after refreshing credentials: You are not authorized to use channel vortex-app/user/u-2/*"
                    ))
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "x"]))
            await backend.server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-2", payload: ["reason": "y"]))
            let payload = try await nextPayload(own)
            #expect(payload.contains(#""userId":"u-1""#))
            await #expect(throws: RealtimeError.self) {
                _ = try await client.publish(PublishRequest(channel: "vortex-app/user/u-2/roleChanged", events: ["{}"]))
            }
            await client.disconnect()
        }
    }

    @Test("reconnect after the server drops every connection (closeAll), through two refused upgrades")
    func reconnectAfterCloseAll() async throws {
        try await withBackend { backend in
            let client = transport(backend, StaticAuthSession(.apiKey(TestCredentials.apiKey)))
            let states = await client.connectionStates()
            let probe = SubscriptionProbe(await client.subscribe(.channel("default/live")))
            try await expectLive(probe)
            try await backend.admin("faults", #"{"action":"refuseConnections","count":2}"#)
            let (_, json) = try await backend.admin("faults", #"{"action":"closeAll","code":4500}"#)
            #expect((json["closed"] as? NSNumber)?.intValue == 1)
            guard case .resumed(let gap) = try await probe.next(timeout: 10) else {
                Issue.record("expected resumed(gap:)")
                return
            }
            #expect(gap.duration >= 0)
            await backend.server.bus.publish(channel: "default/live", events: [#"{"after":"reconnect"}"#])
            #expect(try await nextPayload(probe) == #"{"after":"reconnect"}"#)
            var sawReconnecting = false
            for await state in states {
                if case .reconnecting = state { sawReconnecting = true }
                if sawReconnecting, state == .connected { break }
            }
            #expect(sawReconnecting)
            await client.disconnect()
        }
    }

    @Test("keep-alive silence is detected: with ka stopped the client gives up on the socket and resubscribes")
    func keepAliveSilence() async throws {
        try await withBackend({ configuration in
            configuration.keepAliveInterval = .milliseconds(100)
            configuration.connectionTimeoutMs = 500
        }) { backend in
            let client = transport(backend, StaticAuthSession(.apiKey(TestCredentials.apiKey)))
            let probe = SubscriptionProbe(await client.subscribe(.channel("default/ka")))
            try await expectLive(probe)
            let clock = ContinuousClock()
            let stoppedAt = clock.now
            backend.server.faults.setKeepAliveStopped(true)
            guard case .resumed = try await probe.next(timeout: 5) else {
                Issue.record("expected resumed(gap:) after the keep-alive timeout")
                return
            }
            #expect(clock.now - stoppedAt >= .milliseconds(400), "not before connectionTimeoutMs of silence")
            backend.server.faults.setKeepAliveStopped(false)
            await backend.server.bus.publish(channel: "default/ka", events: ["1"])
            #expect(try await nextPayload(probe) == "1")
            await client.disconnect()
        }
    }

    @Test("rotation at a short maximum duration: no gap, no duplicate")
    func rotation() async throws {
        // The server closes every connection after 1 s; the client rotates 0.5 s before that, so 60 events published
        // 20 ms apart span two rotations. All four stretch together under the sanitizers (a successor slower than the
        // rotation timeout opens a gap, reported, which this test forbids).
        let second = TestTime.scaled(.seconds(1))
        try await withBackend({ $0.maxConnectionDuration = second }) { backend in
            let client = transport(backend, StaticAuthSession(.apiKey(TestCredentials.apiKey))) { configuration in
                configuration.maxConnectionDuration = second
                configuration.rotationLead = second / 2
                configuration.rotationTimeout = second * 0.4
            }
            let states = await client.connectionStates()
            let probe = SubscriptionProbe(await client.subscribe(.channel("default/rotating")))
            try await expectLive(probe)
            let count = 60
            for index in 0..<count {
                await backend.server.bus.publish(channel: "default/rotating", events: [#"{"seq":\#(index)}"#])
                try await Task.sleep(for: second / 50)
            }
            let expected = (0..<count).map { #"{"seq":\#($0)}"# }
            // A last event marks the end: the stream keeps the order, so once it is in, everything before it is too, and
            // a duplicate or a loss shows in what came before it.
            let last = #"{"seq":"last"}"#
            await backend.server.bus.publish(channel: "default/rotating", events: [last])
            try await waitUntil("the last event", timeout: 10) { probe.payloadTexts.contains(last) }
            let received = Array(probe.payloadTexts.prefix { $0 != last })
            #expect(received.count == count, "duplicates or losses: \(received.count) of \(count)")
            #expect(Set(received).count == received.count, "duplicates")
            #expect(Set(received) == Set(expected), "missing: \(Set(expected).subtracting(received).sorted())")
            #expect(received == expected, "order")
            #expect(!probe.events.contains { if case .resumed = $0 { true } else { false } }, "a rotation must not open a gap")
            await client.disconnect()
            var seen: [ConnectionState] = []
            for await state in states {
                seen.append(state)
                if case .disconnected = state { break }
            }
            #expect(!seen.contains { if case .reconnecting = $0 { true } else { false } }, "rotated, never reconnected: \(seen)")
            #expect(backend.server.connections.openedCount(of: .appSyncEvents) >= 3, "the first connection and at least two rotations")
        }
    }

    @Test("an expired JWT is refreshed once: the client asks its AuthSession with forceRefresh and goes live")
    func tokenRefresh() async throws {
        try await withBackend { backend in
            let expired = try DevelopmentToken.make(
                secret: TestCredentials.jwtSecret, user: "u-1", issuedAt: Date().addingTimeInterval(-120), ttl: .seconds(60))
            let auth = ScriptedAuthSession(.bearerToken(expired), TestCredentials.jwt("u-1"))
            let client = transport(backend, auth)
            let probe = SubscriptionProbe(await client.subscribe(.channel("vortex-app/user/u-1/tokenRevoked")))
            try await expectLive(probe)
            // Connect, refused; connect again with forceRefresh; then the subscribe's own request.
            #expect(auth.credentialRequests == [false, true, false])
            await client.disconnect()
        }
    }

    @Test("credentials refused again after a refresh end the subscription with sessionExpired")
    func authRejected() async throws {
        try await withBackend { backend in
            let auth = ScriptedAuthSession(.apiKey("da2-wrong"))
            let client = transport(backend, auth)
            let probe = SubscriptionProbe(await client.subscribe(.channel("default/a")))
            guard case .failed(let error) = try await probe.ending(timeout: 10) else {
                Issue.record("expected a failure")
                return
            }
            guard case RealtimeError.sessionExpired = error else {
                Issue.record("expected sessionExpired, got \(error)")
                return
            }
            #expect(auth.credentialRequests == [false, true])
            await client.disconnect()
        }
    }
}
