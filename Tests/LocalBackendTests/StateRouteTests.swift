import Foundation
import SubscriberCore
import Testing

@testable import LocalBackend

/// `GET /vortex/state` (issue 28 item 4): the current state per entity an identity may see, newest first per entity,
/// and who may ask for it.
@Suite("Local backend: GET /vortex/state")
struct StateRouteTests {
    /// `GET /vortex/state?orgId=…&userId=…` with `authorization` as the `Authorization` header, if any.
    static func state(
        _ backend: Backend, orgId: String, userId: String, authorization: String? = nil, apiKey: String? = nil
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = "GET /vortex/state?orgId=\(orgId)&userId=\(userId) HTTP/1.1\r\nHost: \(backend.host):\(backend.port)\r\n"
        if let authorization { request += "Authorization: \(authorization)\r\n" }
        if let apiKey { request += "x-api-key: \(apiKey)\r\n" }
        request += "Connection: close\r\n\r\n"
        let response = try await RawHTTP.exchange(host: backend.host, port: backend.port, request: request)
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body.utf8))) as? [String: Any] ?? [:]
        return (response.status, json)
    }

    static func publish(_ backend: Backend, _ event: String) async throws {
        #expect(try await backend.admin("events", event).status == 200)
    }

    @Test("newest per entity and kind wins, whatever the order of publication; devices are the user's groups only")
    func newestWins() async throws {
        try await withBackend { backend in
            // cam-1 (g-1): presence twice, the newer first; recording once. cam-2 (g-2): u-1 may not see it.
            try await Self.publish(
                backend,
                #"{"kind":"devicePresence","orgId":"o-1","deviceGroupId":"g-1","timestamp":"2026-11-26T10:00:02.000Z","payload":{"thingName":"cam-1","online":true}}"#
            )
            try await Self.publish(
                backend,
                #"{"kind":"devicePresence","orgId":"o-1","deviceGroupId":"g-1","timestamp":"2026-11-26T10:00:01.000Z","payload":{"thingName":"cam-1","online":false}}"#
            )
            try await Self.publish(
                backend,
                #"{"kind":"deviceRecording","orgId":"o-1","deviceGroupId":"g-1","timestamp":"2026-11-26T10:00:00.000Z","payload":{"thingName":"cam-1","recording":true}}"#
            )
            try await Self.publish(
                backend,
                #"{"kind":"devicePresence","orgId":"o-1","deviceGroupId":"g-2","timestamp":"2026-11-26T10:00:00.000Z","payload":{"thingName":"cam-2","online":true}}"#
            )
            try await Self.publish(
                backend, #"{"kind":"plan","orgId":"o-1","timestamp":"2026-11-26T10:00:00.000Z","payload":{"isFreePlan":false}}"#)
            try await Self.publish(
                backend, #"{"kind":"roleChanged","userId":"u-1","timestamp":"2026-11-26T10:00:00.000Z","payload":{"reason":"promoted"}}"#)
            try await Self.publish(
                backend,
                #"{"kind":"archiveState","orgId":"o-1","deviceGroupId":"g-1","payload":{"thingName":"cam-1","archiveId":"a-1","status":"ready"}}"#
            )

            let (status, state) = try await Self.state(backend, orgId: "o-1", userId: "u-1")
            #expect(status == 200)
            #expect(state["organizationId"] as? String == "o-1")
            #expect(state["userId"] as? String == "u-1")
            let devices = try #require(state["devices"] as? [String: [String: [String: Any]]])
            #expect(Array(devices.keys) == ["cam-1"], "cam-2 is in g-2, which u-1 may not see")
            #expect(devices["cam-1"]?["devicePresence"]?["online"] as? Bool == true, "the newer presence, published first")
            #expect(devices["cam-1"]?["devicePresence"]?["eventType"] as? String == "device/presenceChanged")
            #expect(devices["cam-1"]?["deviceRecording"]?["recording"] as? Bool == true)
            #expect((state["organization"] as? [String: [String: Any]])?["plan"]?["isFreePlan"] as? Bool == false)
            #expect((state["user"] as? [String: [String: Any]])?["roleChanged"]?["reason"] as? String == "promoted")

            // The admin (u-3) sees every group; another organization's user (u-4) sees none of o-1's devices as its own.
            let admin = try await Self.state(backend, orgId: "o-1", userId: "u-3").json
            #expect(Set((admin["devices"] as? [String: Any])?.keys ?? [:].keys) == ["cam-1", "cam-2"])
            #expect(((admin["user"] as? [String: Any]) ?? ["x": 1]).isEmpty, "u-1's role change is u-1's")
            let stranger = try await Self.state(backend, orgId: "o-1", userId: "u-4").json
            #expect(((stranger["devices"] as? [String: Any]) ?? ["x": 1]).isEmpty)
        }
    }

    @Test("without the admin endpoints: that identity's token only; another user's or an API key is forbidden, none unauthorized")
    func credentials() async throws {
        try await withBackend({ $0.admin = false }) { backend in
            let own = try DevelopmentToken.make(secret: TestCredentials.jwtSecret, user: "u-1", ttl: .seconds(600))
            let other = try DevelopmentToken.make(secret: TestCredentials.jwtSecret, user: "u-2", ttl: .seconds(600))
            #expect(try await Self.state(backend, orgId: "o-1", userId: "u-1", authorization: own).status == 200)
            #expect(try await Self.state(backend, orgId: "o-1", userId: "u-1", authorization: other).status == 403)
            #expect(try await Self.state(backend, orgId: "o-1", userId: "u-1", apiKey: TestCredentials.apiKey).status == 403)
            #expect(try await Self.state(backend, orgId: "o-1", userId: "u-1").status == 401)
            #expect(try await Self.state(backend, orgId: "o-1", userId: "u-1", authorization: "not-a-token").status == 401)
        }
    }

    @Test("timestamps compare as instants, with or without fractional seconds")
    func timestamps() throws {
        let whole = try #require(EntityStateLedger.instant("2026-11-26T10:00:01Z"))
        let fraction = try #require(EntityStateLedger.instant("2026-11-26T10:00:00.999Z"))
        #expect(fraction < whole)
        #expect(EntityStateLedger.instant("yesterday") == nil)
    }

    @Test("orgId and userId are required")
    func missingParameters() async throws {
        try await withBackend { backend in
            for query in ["?orgId=o-1", "?userId=u-1", ""] {
                let request = "GET /vortex/state\(query) HTTP/1.1\r\nHost: \(backend.host):\(backend.port)\r\nConnection: close\r\n\r\n"
                let response = try await RawHTTP.exchange(host: backend.host, port: backend.port, request: request)
                #expect(response.status == 400, "\(query)")
            }
        }
    }
}
