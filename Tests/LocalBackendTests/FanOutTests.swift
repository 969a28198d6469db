import AppSyncEventsTransport
import Foundation
import LocalBackend
import SubscriberCore
import Testing
import VortexVocabulary

/// Domain events reach exactly the users allowed to see them, on their AppSync user channels.
@Suite("Event bus fan-out")
struct FanOutTests {
    /// One raw session per sample user, each subscribed to `vortex-app/user/{id}/*`.
    func subscribeEveryone(_ backend: Backend) async throws -> [String: RawSession] {
        var sessions: [String: RawSession] = [:]
        for user in ["u-1", "u-2", "u-3", "u-4"] {
            let session = try await backend.session(TestCredentials.jwt(user))
            #expect(try await session.subscribe("vortex-app/user/\(user)/*", id: "all")["type"] as? String == "subscribe_success")
            sessions[user] = session
        }
        return sessions
    }

    /// The events (decoded JSON objects) each user received: everything before a barrier, so the count is exact.
    func received(_ sessions: [String: RawSession]) async throws -> [String: [[String: JSONValue]]] {
        var result: [String: [[String: JSONValue]]] = [:]
        for (user, session) in sessions {
            let frames = try await session.dataBeforeBarrier()
            result[user] = try frames.map { frame in
                let event = try #require(frame["event"] as? String, "event must be a JSON string")
                return try JSONDecoder().decode([String: JSONValue].self, from: Data(event.utf8))
            }
        }
        return result
    }

    struct FanOutCase: Sendable, CustomTestStringConvertible {
        var event: DomainEvent
        var recipients: [String]
        var testDescription: String { "\(event.kind.rawValue) → \(recipients)" }
    }

    static let cases: [FanOutCase] = [
        FanOutCase(
            event: DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["thingName": "cam-1", "online": true]),
            recipients: ["u-1", "u-3"]),
        FanOutCase(
            event: DomainEvent(kind: .deviceRecording, orgId: "o-1", deviceGroupId: "g-2", payload: ["recording": false]),
            recipients: ["u-2", "u-3"]),
        FanOutCase(
            event: DomainEvent(kind: .deviceFirmware, orgId: "o-2", deviceGroupId: "g-1", payload: ["fwUpdateState": 3]),
            recipients: ["u-4"]),
        FanOutCase(
            event: DomainEvent(kind: .archiveState, orgId: "o-1", deviceGroupId: "g-9", payload: ["status": "done"]), recipients: ["u-3"]),
        FanOutCase(
            event: DomainEvent(kind: .licensePhase, orgId: "o-1", payload: ["licensePhase": "Valid"]), recipients: ["u-1", "u-2", "u-3"]),
        FanOutCase(event: DomainEvent(kind: .plan, orgId: "o-2", payload: ["isFreePlan": true]), recipients: ["u-4"]),
        FanOutCase(
            event: DomainEvent(kind: .aiSettings, orgId: "o-1", payload: ["aiControlSetting": ["uuid": "x", "termsAgreement": true]]),
            recipients: ["u-1", "u-2", "u-3"]),
        FanOutCase(
            event: DomainEvent(kind: .roleChanged, orgId: "o-1", userId: "u-2", payload: ["reason": "promoted"]), recipients: ["u-2"]),
        FanOutCase(event: DomainEvent(kind: .tokenRevoked, userId: "u-4", payload: ["reason": "PASSWORD_CHANGED"]), recipients: ["u-4"]),
    ]

    @Test("EventBus.publish reaches exactly the allowed users, on the kind's channel", arguments: cases)
    func fanOut(_ fanOutCase: FanOutCase) async throws {
        try await withBackend { backend in
            let sessions = try await subscribeEveryone(backend)
            let summary = await backend.server.bus.publish(fanOutCase.event)
            #expect(summary.deliveredTo == fanOutCase.recipients)
            #expect(summary.channels == fanOutCase.recipients.map { fanOutCase.event.kind.channel(userId: $0) })
            #expect(summary.frames == fanOutCase.recipients.count)
            let received = try await received(sessions)
            for user in sessions.keys.sorted() {
                let events = received[user] ?? []
                if fanOutCase.recipients.contains(user) {
                    #expect(events.count == 1, "\(user) should get the event")
                    let event = try #require(events.first)
                    #expect(event["eventType"] == .string(fanOutCase.event.kind.eventType))
                    guard case .string(let timestamp) = event["timestamp"] else {
                        Issue.record("no timestamp")
                        continue
                    }
                    #expect(timestamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(timestamp)")
                    for (key, value) in fanOutCase.event.payload { #expect(event[key] == value, "\(key)") }
                    if let orgId = fanOutCase.event.orgId { #expect(event["orgId"] == .string(orgId)) }
                    if fanOutCase.event.kind.audience == .deviceGroup {
                        #expect(event["siteId"] == fanOutCase.event.deviceGroupId.map(JSONValue.string))
                    }
                    if fanOutCase.event.kind.audience == .user {
                        #expect(event["userId"] == fanOutCase.event.userId.map(JSONValue.string))
                    }
                    if fanOutCase.event.kind == .tokenRevoked { #expect(event["revokedAt"] == .string(timestamp)) }
                } else {
                    #expect(events.isEmpty, "\(user) must not see \(fanOutCase.event.kind)")
                }
            }
            for session in sessions.values { await session.close() }
        }
    }

    @Test("POST /vortex/events fans out and answers deliveredTo; domainEvents() sees it")
    func adminEndpoint() async throws {
        try await withBackend { backend in
            let sessions = try await subscribeEveryone(backend)
            let observed = backend.server.bus.domainEvents()
            let body = #"{"kind":"devicePresence","orgId":"o-1","deviceGroupId":"g-2","payload":{"thingName":"cam-9","online":false}}"#
            let (status, json) = try await backend.admin("events", body)
            #expect(status == 200)
            #expect(json["deliveredTo"] as? [String] == ["u-2", "u-3"])
            var iterator = observed.makeAsyncIterator()
            let event = await iterator.next()
            #expect(event?.kind == .devicePresence)
            #expect(event?.deviceGroupId == "g-2")
            #expect(event?.timestamp != nil)
            let received = try await received(sessions)
            #expect(received["u-2"]?.first?["thingName"] == "cam-9")
            #expect(received["u-1"]?.isEmpty == true && received["u-4"]?.isEmpty == true)
            #expect(try await backend.admin("events", #"{"kind":"devicePresence","orgId":"o-1"}"#).status == 400)
            #expect(try await backend.admin("events", #"{"kind":"weather"}"#).status == 400)
            for session in sessions.values { await session.close() }
        }
    }

    @Test("exact channel subscriptions receive only their kind")
    func exactChannels() async throws {
        try await withBackend { backend in
            let session = try await backend.session(TestCredentials.jwt("u-1"))
            #expect(
                try await session.subscribe("vortex-app/user/u-1/organization/planChanged", id: "plan")["type"] as? String
                    == "subscribe_success")
            #expect(try await session.subscribe("vortex-app/user/u-1/device/*", id: "device")["type"] as? String == "subscribe_success")
            await backend.server.bus.publish(DomainEvent(kind: .licensePhase, orgId: "o-1", payload: ["licensePhase": "Valid"]))
            await backend.server.bus.publish(DomainEvent(kind: .plan, orgId: "o-1", payload: ["isFreePlan": false]))
            await backend.server.bus.publish(
                DomainEvent(kind: .deviceFirmware, orgId: "o-1", deviceGroupId: "g-1", payload: ["fwUpdateState": 14]))
            let frames = try await session.dataBeforeBarrier()
            #expect(frames.compactMap { $0["id"] as? String } == ["plan", "device"])
            await session.close()
        }
    }

    @Test("recipients(of:) is the permission filter the GraphQL side shares")
    func recipients() async throws {
        try await withBackend { backend in
            let bus = backend.server.bus
            #expect(bus.recipients(of: DomainEvent(kind: .archiveState, orgId: "o-1", deviceGroupId: "g-1")) == ["u-1", "u-3"])
            #expect(bus.recipients(of: DomainEvent(kind: .plan, orgId: "o-3")) == [])
            #expect(bus.recipients(of: DomainEvent(kind: .tokenRevoked, userId: "someone")) == ["someone"])
            #expect(bus.directory == .sample)
        }
    }
}
