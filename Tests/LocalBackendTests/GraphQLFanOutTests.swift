import Foundation
import GraphQLTransport
import LocalBackend
import RealtimeTesting
import SubscriberCore
import Testing
import VortexVocabulary
import WebSocketNIO

/// Domain events on the legacy GraphQL side: server-side permission filtering, and field-by-field parity with what the
/// AppSync side publishes for the same event.
@Suite("GraphQL fan-out, permission filtering and parity")
struct GraphQLFanOutTests {
    /// The sample directory's users and their organizations: `u-1` sees `g-1`, `u-2` sees `g-2`, `u-3` is the admin
    /// of `o-1` (every group), `u-4` is in `o-2` (with a `g-1` of its own).
    static let organizations = ["u-1": "o-1", "u-2": "o-1", "u-3": "o-1", "u-4": "o-2"]

    /// One GraphQL session per sample user, subscribed to all five notifier operations (own organization, own user),
    /// attached before this returns.
    func subscribeEveryone(_ backend: Backend) async throws -> [String: GraphQLRawSocket] {
        var sockets: [String: GraphQLRawSocket] = [:]
        for (user, organization) in Self.organizations {
            let socket = try await backend.graphQLSession(user)
            for upstream in NotifierLegacyOperations.Upstream.allCases {
                let operation = NotifierLegacyOperations.operation(for: upstream, user: user, organization: organization)
                try await socket.send(GraphQLFrames.subscribe(id: upstream.rawValue, operation))
            }
            #expect(try await socket.sync().isEmpty, "\(user): every operation is accepted")
            sockets[user] = socket
        }
        return sockets
    }

    /// The field of each operation's output that carries a barrier's marker.
    static let markerFields: [NotifierLegacyOperations.Upstream: String] = [
        .device: "thingName", .archive: "thingName", .organization: "licensePhase", .role: "reason", .revoke: "requestId",
    ]

    /// An event `user` may see on `upstream`'s operation, carrying `marker`.
    static func barrier(for user: String, on upstream: NotifierLegacyOperations.Upstream, marker: String) -> DomainEvent {
        let organization = organizations[user] ?? "o-1"
        let group = user == "u-2" ? "g-2" : "g-1"
        let field = markerFields[upstream] ?? "reason"
        return switch upstream {
        case .device:
            DomainEvent(
                kind: .devicePresence, orgId: organization, deviceGroupId: group, payload: [field: .string(marker), "online": true])
        case .archive: DomainEvent(kind: .archiveState, orgId: organization, deviceGroupId: group, payload: [field: .string(marker)])
        case .organization: DomainEvent(kind: .licensePhase, orgId: organization, payload: [field: .string(marker)])
        case .role: DomainEvent(kind: .roleChanged, userId: user, payload: [field: .string(marker)])
        case .revoke: DomainEvent(kind: .tokenRevoked, userId: user, payload: [field: .string(marker)])
        }
    }

    /// The barrier marker a `next` carries, if it is a barrier's.
    static func marker(of message: [String: Any]) -> String? {
        guard let id = message["id"] as? String, let upstream = NotifierLegacyOperations.Upstream(rawValue: id),
            let field = markerFields[upstream],
            let marker = nextData(message, field: NotifierLegacyOperations.field(upstream))?[field] as? String,
            marker.hasPrefix("barrier-")
        else { return nil }
        return marker
    }

    /// Every message `socket` (of `user`) received before a barrier on `upstream`'s operation: an event the user may
    /// see, published now. An operation writes its events in order, so what it would have written for earlier events
    /// came before the barrier's `next`; nothing has to be waited for. Barriers of other users are left out.
    func messagesBeforeBarrier(
        _ backend: Backend, _ socket: GraphQLRawSocket, user: String, on upstream: NotifierLegacyOperations.Upstream
    ) async throws -> [[String: Any]] {
        let marker = "barrier-\(UUID().uuidString.lowercased())"
        await backend.server.bus.publish(Self.barrier(for: user, on: upstream, marker: marker))
        var before: [[String: Any]] = []
        while true {
            let message = try await socket.next()
            switch Self.marker(of: message) {
            case marker?: return before
            case nil: before.append(message)
            default: continue
            }
        }
    }

    struct FanOutCase: Sendable, CustomTestStringConvertible {
        var event: DomainEvent
        var recipients: [String]
        var testDescription: String { "\(event.kind.rawValue) → \(recipients)" }
    }

    static let cases: [FanOutCase] = [
        FanOutCase(
            event: GraphQLSamples.event(.devicePresence, orgId: "o-1", deviceGroupId: "g-1", userId: ""), recipients: ["u-1", "u-3"]),
        FanOutCase(
            event: GraphQLSamples.event(.deviceRecording, orgId: "o-1", deviceGroupId: "g-2", userId: ""), recipients: ["u-2", "u-3"]),
        FanOutCase(event: GraphQLSamples.event(.deviceFirmware, orgId: "o-2", deviceGroupId: "g-1", userId: ""), recipients: ["u-4"]),
        FanOutCase(event: GraphQLSamples.event(.archiveState, orgId: "o-1", deviceGroupId: "g-9", userId: ""), recipients: ["u-3"]),
        FanOutCase(event: GraphQLSamples.event(.archiveState, orgId: "o-1", deviceGroupId: "g-1", userId: ""), recipients: ["u-1", "u-3"]),
        FanOutCase(
            event: GraphQLSamples.event(.licensePhase, orgId: "o-1", deviceGroupId: "", userId: ""), recipients: ["u-1", "u-2", "u-3"]),
        FanOutCase(event: GraphQLSamples.event(.plan, orgId: "o-2", deviceGroupId: "", userId: ""), recipients: ["u-4"]),
        FanOutCase(
            event: GraphQLSamples.event(.aiSettings, orgId: "o-1", deviceGroupId: "", userId: ""), recipients: ["u-1", "u-2", "u-3"]),
        FanOutCase(event: GraphQLSamples.event(.roleChanged, orgId: "o-1", deviceGroupId: "", userId: "u-2"), recipients: ["u-2"]),
        FanOutCase(event: GraphQLSamples.event(.tokenRevoked, orgId: "", deviceGroupId: "", userId: "u-4"), recipients: ["u-4"]),
    ]

    @Test("one domain event reaches exactly the users allowed to see it, on the kind's operation", arguments: cases)
    func fanOut(_ fanOutCase: FanOutCase) async throws {
        try await withBackend { backend in
            let sockets = try await subscribeEveryone(backend)
            var event = fanOutCase.event
            if event.kind == .tokenRevoked { event.orgId = nil }
            let summary = await backend.server.bus.publish(event)
            #expect(summary.deliveredTo == fanOutCase.recipients, "the AppSync side agrees")
            let upstream = NotifierLegacyOperations.upstream(for: event.kind)
            // Everything each user got before a barrier on the same operation: the event once, or nothing at all.
            for user in sockets.keys.sorted() {
                let socket = try #require(sockets[user])
                let frames = try await messagesBeforeBarrier(backend, socket, user: user, on: upstream)
                if fanOutCase.recipients.contains(user) {
                    #expect(frames.count == 1, "\(user) should get the event once: \(frames)")
                    let frame = try #require(frames.first)
                    #expect(frame["type"] as? String == "next")
                    #expect(frame["id"] as? String == upstream.rawValue)
                    let fields = try #require(nextData(frame, field: NotifierLegacyOperations.field(upstream)))
                    #expect(fields["eventType"] as? String == event.kind.eventType)
                } else {
                    #expect(frames.isEmpty, "\(user) must not see \(event.kind): \(frames)")
                }
            }
            for socket in sockets.values { await socket.close() }
        }
    }

    @Test("the merged outputs set only the event kind's field; deviceGroupID and siteId are the device group")
    func mergedOutputs() async throws {
        try await withBackend { backend in
            let socket = try await backend.graphQLSession("u-3")
            for upstream in [NotifierLegacyOperations.Upstream.device, .organization] {
                try await socket.send(
                    GraphQLFrames.subscribe(id: upstream.rawValue, NotifierLegacyOperations.operation(for: upstream, argument: "o-1")))
            }
            #expect(try await socket.sync().isEmpty)
            let own: [VortexEventKind: String] = [
                .devicePresence: "online", .deviceRecording: "recording", .deviceFirmware: "fwUpdateState", .licensePhase: "licensePhase",
                .plan: "isFreePlan", .aiSettings: "AIControlSetting",
            ]
            for kind in own.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                // A payload that carries every kind's field: only the event's own kind's field may come through.
                var event = GraphQLSamples.event(kind, orgId: "o-1", deviceGroupId: "g-2", userId: "")
                event.payload.merge(["online": true, "recording": true, "fwUpdateState": 3, "licensePhase": "Valid", "isFreePlan": true]) {
                    old, _ in old
                }
                await backend.server.bus.publish(event)
                let upstream = NotifierLegacyOperations.upstream(for: kind)
                let fields = try #require(nextData(try await socket.next(), field: NotifierLegacyOperations.field(upstream)))
                for (otherKind, otherField) in own where NotifierLegacyOperations.upstream(for: otherKind) == upstream {
                    if otherKind == kind {
                        #expect(!(fields[otherField] is NSNull), "\(kind) sets \(otherField)")
                    } else {
                        #expect(fields[otherField] is NSNull, "\(kind) leaves \(otherField) null")
                    }
                }
                if upstream == .device {
                    #expect(fields["deviceGroupID"] as? String == "g-2")
                    #expect(fields["siteId"] as? String == "g-2")
                }
            }
            await socket.close()
        }
    }

    // MARK: Parity

    /// The GraphQL output's fields as the AppSync event names them: `deviceGroupID` and null fields (other kinds')
    /// left out, `AIControlSetting` as `aiControlSetting`.
    static func comparable(graphQL fields: [String: JSONValue]) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (key, value) in fields where key != "deviceGroupID" && value != .null {
            result[key == "AIControlSetting" ? "aiControlSetting" : key] = value
        }
        return result
    }

    @Test(
        "parity: for the same domain event the GraphQL next equals the AppSync data event, field by field",
        arguments: VortexEventKind.allCases)
    func parity(_ kind: VortexEventKind) async throws {
        try await withBackend { backend in
            let user = "u-1"
            let appSync = try await backend.session(TestCredentials.jwt(user))
            #expect(try await appSync.subscribe("vortex-app/user/\(user)/*", id: "all")["type"] as? String == "subscribe_success")
            let graphQL = try await backend.graphQLSession(user)
            let upstream = NotifierLegacyOperations.upstream(for: kind)
            try await graphQL.send(
                GraphQLFrames.subscribe(id: "op", NotifierLegacyOperations.operation(for: upstream, user: user, organization: "o-1")))
            #expect(try await graphQL.sync().isEmpty)

            let event = GraphQLSamples.event(kind, orgId: "o-1", deviceGroupId: "g-1", userId: user)
            let summary = await backend.server.bus.publish(event)
            #expect(summary.deliveredTo.contains(user))

            let data = try await appSync.socket.nextSkippingKeepAlive()
            #expect(data["type"] as? String == "data")
            let appSyncText = try #require(data["event"] as? String)
            #expect(appSyncText == summary.event)
            let appSyncEvent = try JSONDecoder().decode([String: JSONValue].self, from: Data(appSyncText.utf8))

            let nextText = try await graphQL.nextText()
            let next = try JSONDecoder().decode([String: JSONValue].self, from: Data(nextText.utf8))
            guard case .object(let payload) = next["payload"], case .object(let dataObject) = payload["data"],
                case .object(let fields) = dataObject[NotifierLegacyOperations.field(upstream)]
            else {
                Issue.record("not a next with data: \(nextText)")
                return
            }
            #expect(payload["errors"] == nil)

            let selected = GraphQLSamples.selectedFields(upstream).map { $0 == "AIControlSetting" ? "aiControlSetting" : $0 }
            let expected = appSyncEvent.filter { selected.contains($0.key) }
            #expect(Self.comparable(graphQL: fields) == expected)
            #expect(fields["timestamp"] == appSyncEvent["timestamp"], "the same timestamp string")
            #expect(fields["eventType"] == .string(kind.eventType))
            if kind.audience == .deviceGroup {
                #expect(fields["deviceGroupID"] == "g-1")
                #expect(fields["siteId"] == "g-1")
            }
            if kind == .aiSettings {
                // The JSON scalar passes the options object through unchanged.
                guard case .object(let setting) = fields["AIControlSetting"], case .object(let published) = appSyncEvent["aiControlSetting"]
                else {
                    Issue.record("AIControlSetting missing")
                    return
                }
                #expect(setting["options"] == published["options"])
                #expect(
                    setting["options"]?.jsonText
                        == GraphQLSamples.event(.aiSettings, orgId: "", deviceGroupId: "", userId: "").aiOptions?.jsonText)
            }
            if kind == .tokenRevoked { #expect(fields["revokedAt"] == appSyncEvent["timestamp"]) }
            await appSync.close()
            await graphQL.close()
        }
    }

    @Test("parity holds for an event with its own timestamp too")
    func explicitTimestamp() async throws {
        try await withBackend { backend in
            let graphQL = try await backend.graphQLSession("u-2")
            try await graphQL.send(GraphQLFrames.subscribe(id: "op", NotifierLegacyOperations.operation(for: .revoke, argument: "u-2")))
            #expect(try await graphQL.sync().isEmpty)
            let stamp = "2025-01-31T09:15:02.125Z"
            let summary = await backend.server.bus.publish(
                DomainEvent(kind: .tokenRevoked, userId: "u-2", payload: ["revokedAt": "2025-01-31T09:00:00.000Z"], timestamp: stamp))
            let fields = try #require(nextData(try await graphQL.next(), field: "subscribeUserTokenRevoke"))
            #expect(fields["timestamp"] as? String == stamp)
            #expect(fields["revokedAt"] as? String == "2025-01-31T09:00:00.000Z")
            #expect(summary.event.contains(#""timestamp":"2025-01-31T09:15:02.125Z""#))
            await graphQL.close()
        }
    }
}

extension DomainEvent {
    /// The `options` of an AI settings payload.
    var aiOptions: JSONValue? {
        guard case .object(let setting) = payload["aiControlSetting"] else { return nil }
        return setting["options"]
    }
}

/// The real client, `GraphQLTransport` with its default `NIOWebSocketConnector`, against the real server.
///
/// The deadlines here only bound a hang. Going live takes the confirmation window (2 s) on top of connecting, and this
/// suite starts while the whole LocalBackendTests run starts its servers: measured 4.3-6.6 s to `live` on 2 loaded
/// cores, which a 5 s deadline (and a 5 s ack timeout) made a test that failed now and then.
@Suite("GraphQLTransport against the local backend", .serialized)
struct GraphQLClientIntegrationTests {
    /// How long a step may take before the test calls it a hang.
    static let stepDeadline: Double = 30

    func transport(_ backend: Backend, user: String) throws -> GraphQLTransport {
        var configuration = try GraphQLTransportConfiguration(backend.endpoints.graphql)
        configuration.link.reconnectPolicy = .fixed(.milliseconds(100))
        configuration.link.ackTimeout = .seconds(15)
        return GraphQLTransport(
            configuration: configuration, auth: StaticAuthSession(TestCredentials.jwt(user)), connector: NIOWebSocketConnector(),
            logger: testLogger)
    }

    /// graphql-transport-ws has no subscribe acknowledgement: `.live` means "sent", not "attached". Publishes `event`
    /// until `probe` has received a new payload of the event's kind (at most ``stepDeadline``; earlier retries of another event may
    /// still trickle in and are skipped), then returns that payload as JSON.
    func publishUntilReceived(_ backend: Backend, _ event: DomainEvent, _ probe: SubscriptionProbe) async throws -> [String: JSONValue] {
        let before = probe.payloadTexts.count
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(TestTime.scaled(Self.stepDeadline)))
        func received() throws -> [String: JSONValue]? {
            for text in probe.payloadTexts.dropFirst(before) {
                let fields = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
                if fields["eventType"] == .string(event.kind.eventType) { return fields }
            }
            return nil
        }
        while true {
            guard clock.now < deadline else { throw TestTimeoutError(what: "\(event.kind) on the GraphQL client") }
            await backend.server.bus.publish(event)
            let wait = clock.now.advanced(by: .milliseconds(100))
            while clock.now < wait {
                if let fields = try received() { return fields }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test("the notifier's five operations receive their events; after closeAll the client reconnects with resumed(gap:)")
    func notifierOperationsAndReconnect() async throws {
        try await withBackend { backend in
            let client = try transport(backend, user: "u-1")
            var probes: [NotifierLegacyOperations.Upstream: SubscriptionProbe] = [:]
            for upstream in NotifierLegacyOperations.Upstream.allCases {
                let operation = NotifierLegacyOperations.operation(for: upstream, user: "u-1", organization: "o-1")
                probes[upstream] = SubscriptionProbe(await client.subscribe(.graphQL(operation)))
            }
            for (upstream, probe) in probes { #expect(try await probe.next(timeout: Self.stepDeadline) == .live, "\(upstream)") }

            for event in GraphQLSamples.events(orgId: "o-1", deviceGroupId: "g-1", userId: "u-1") {
                let probe = try #require(probes[NotifierLegacyOperations.upstream(for: event.kind)])
                let fields = try await publishUntilReceived(backend, event, probe)
                #expect(fields["eventType"] == .string(event.kind.eventType))
                if event.kind.audience == .deviceGroup { #expect(fields["thingName"] == "cam-7") }
                if event.kind == .aiSettings, case .object(let setting) = fields["AIControlSetting"] {
                    #expect(setting["options"] == event.aiOptions)
                }
            }
            // An event u-1 may not see never arrives (g-2 is u-2's group): not before an event u-1 may see, published
            // after it on the same operation, which keeps its order.
            let devices = try #require(probes[.device])
            let seen = devices.payloadTexts.count
            await backend.server.bus.publish(
                DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-2", payload: ["online": true]))
            let barrier = GraphQLFanOutTests.barrier(for: "u-1", on: .device, marker: "barrier-forbidden")
            await backend.server.bus.publish(barrier)
            try await waitUntil("the barrier on the device operation", timeout: 10) {
                devices.payloadTexts.dropFirst(seen).contains { $0.contains("barrier-forbidden") }
            }
            let before = devices.payloadTexts.dropFirst(seen).prefix { !$0.contains("barrier-forbidden") }
            #expect(!before.contains { $0.contains("g-2") }, "u-1 got an event of g-2: \(before)")

            let (_, json) = try await backend.admin("faults", #"{"action":"closeAll","code":1012}"#)
            #expect((json["closed"] as? NSNumber)?.intValue == 1)
            for (upstream, probe) in probes {
                var resumed = false
                while !resumed {
                    guard case .resumed(let gap) = try await probe.next(timeout: Self.stepDeadline) else { continue }
                    #expect(gap.duration >= 0)
                    resumed = true
                }
                #expect(resumed, "\(upstream)")
            }
            for kind in [VortexEventKind.deviceRecording, .archiveState, .plan, .roleChanged, .tokenRevoked] {
                let probe = try #require(probes[NotifierLegacyOperations.upstream(for: kind)])
                let event = GraphQLSamples.event(kind, orgId: "o-1", deviceGroupId: "g-1", userId: "u-1")
                #expect(try await publishUntilReceived(backend, event, probe)["eventType"] == .string(kind.eventType), "after reconnect")
            }
            await client.disconnect()
        }
    }

    @Test("a forbidden operation ends with graphQLErrors; the others on the same connection keep delivering")
    func forbiddenOperation() async throws {
        try await withBackend { backend in
            let client = try transport(backend, user: "u-1")
            let own = SubscriptionProbe(await client.subscribe(.graphQL(NotifierLegacyOperations.operation(for: .role, argument: "u-1"))))
            let foreign = SubscriptionProbe(
                await client.subscribe(.graphQL(NotifierLegacyOperations.operation(for: .role, argument: "u-2"))))
            #expect(try await own.next(timeout: Self.stepDeadline) == .live)
            guard case .failed(let error) = try await foreign.ending(timeout: Self.stepDeadline) else {
                Issue.record("the foreign subscription should fail")
                return
            }
            guard case RealtimeError.graphQLErrors(let errors) = error else {
                Issue.record("expected graphQLErrors, got \(error)")
                return
            }
            #expect(errors.contains(#""message":"Forbidden""#))
            let fields = try await publishUntilReceived(
                backend, DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "x"]), own)
            #expect(fields["reason"] == "x")
            await client.disconnect()
        }
    }
}
