import AppSyncEventsTransport
import Foundation
import LocalBackend
import SubscriberCore
import Testing

/// `POST /event` (protocols.md §1, HTTP publish).
@Suite("AppSync Events conformance: HTTP publish")
struct HTTPPublishTests {
    /// Posts `body` with the auth headers of `credentials` (signed over `body`).
    func post(_ backend: Backend, _ credentials: AuthCredentials, body: String) async throws -> (status: Int, json: [String: Any]) {
        var headers = backend.authorizer(credentials).authorization(body: body)
        headers["content-type"] = headers["content-type"] ?? "application/json"
        let response = try await URLSessionHTTPClient().post(url: backend.endpoint.httpURL, headers: headers, body: Data(body.utf8))
        let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] ?? [:]
        return (response.status, json)
    }

    @Test("success: 200 with successful entries, and subscribers get the events")
    func success() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/http/*", id: "s")["type"] as? String == "subscribe_success")
            let publisher = AppSyncHTTPPublisher(endpoint: backend.endpoint)
            let events = [#"{"a":1}"#, #"{"b":"<x/>"}"#]
            let result = try await publisher.publish(
                channel: "/default/http/one", events: events, authorizer: backend.authorizer(.apiKey(TestCredentials.apiKey)))
            #expect(result.successful.map(\.index) == [0, 1])
            #expect(result.failed.isEmpty)
            #expect(try await session.socket.nextSkippingKeepAlive()["event"] as? String == events[0])
            #expect(try await session.socket.nextSkippingKeepAlive()["event"] as? String == events[1])
            await session.close()
        }
    }

    @Test("partial: an event that is not JSON is listed under failed, the rest go out")
    func partial() async throws {
        try await withBackend { backend in
            let body = AppSyncFrames.publishBody("default/http", [#"{"ok":true}"#, "{broken"])
            let (status, json) = try await post(backend, .apiKey(TestCredentials.apiKey), body: body)
            #expect(status == 200)
            #expect((json["successful"] as? [[String: Any]])?.compactMap { ($0["index"] as? NSNumber)?.intValue } == [0])
            #expect((json["failed"] as? [[String: Any]])?.compactMap { ($0["index"] as? NSNumber)?.intValue } == [1])
        }
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var credentials: AuthCredentials
        var body: String
        var status: Int
        var errorType: String
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(
            name: "wrong API key", credentials: .apiKey("da2-nope"), body: AppSyncFrames.publishBody("default/a", ["{}"]), status: 401,
            errorType: "UnauthorizedException"),
        ErrorCase(
            name: "expired JWT",
            credentials: .bearerToken(
                try! DevelopmentToken.make(
                    secret: TestCredentials.jwtSecret, user: "u-1", issuedAt: Date().addingTimeInterval(-90), ttl: .seconds(30))),
            body: AppSyncFrames.publishBody("default/a", ["{}"]), status: 401, errorType: "UnauthorizedException"),
        ErrorCase(
            name: "foreign user channel", credentials: TestCredentials.jwt("u-1"),
            body: AppSyncFrames.publishBody("vortex-app/user/u-2/roleChanged", ["{}"]), status: 401, errorType: "UnauthorizedException"),
        ErrorCase(
            name: "wildcard", credentials: .apiKey(TestCredentials.apiKey), body: AppSyncFrames.publishBody("default/*", ["{}"]),
            status: 400,
            errorType: "BadRequestException"),
        ErrorCase(
            name: "six events", credentials: .apiKey(TestCredentials.apiKey),
            body: AppSyncFrames.publishBody("default/a", Array(repeating: "1", count: 6)), status: 400, errorType: "BadRequestException"),
        ErrorCase(
            name: "not JSON", credentials: .apiKey(TestCredentials.apiKey), body: "channel=default/a", status: 400,
            errorType: "BadRequestException"),
    ]

    @Test("refusals: non-2xx with errors[].errorType", arguments: errorCases)
    func refusal(_ errorCase: ErrorCase) async throws {
        try await withBackend { backend in
            let (status, json) = try await post(backend, errorCase.credentials, body: errorCase.body)
            #expect(status == errorCase.status)
            #expect(firstErrorType(json) == errorCase.errorType)
        }
    }

    @Test("the client's HTTP publisher surfaces a 401 as publishRejected(UnauthorizedException)")
    func clientSees401() async throws {
        try await withBackend { backend in
            let publisher = AppSyncHTTPPublisher(endpoint: backend.endpoint)
            await #expect(throws: RealtimeError.self) {
                _ = try await publisher.publish(channel: "default/a", events: ["{}"], authorizer: backend.authorizer(.apiKey("da2-nope")))
            }
            do {
                _ = try await publisher.publish(channel: "default/a", events: ["{}"], authorizer: backend.authorizer(.apiKey("da2-nope")))
            } catch let RealtimeError.publishRejected(errorType, _) {
                #expect(errorType == "UnauthorizedException")
            }
        }
    }

    @Test("IAM: the signature covers the exact body bytes")
    func iam() async throws {
        try await withBackend { backend in
            let body = AppSyncFrames.publishBody("default/iam", [#"{"html":"<p>&</p>"}"#])
            let (status, _) = try await post(backend, TestCredentials.iam, body: body)
            #expect(status == 200)
            // Headers signed for one body, sent with another.
            var headers = backend.authorizer(TestCredentials.iam).authorization(body: body)
            headers["content-type"] = "application/json"
            let other = AppSyncFrames.publishBody("default/iam", [#"{"html":"<p>!</p>"}"#])
            let response = try await URLSessionHTTPClient().post(url: backend.endpoint.httpURL, headers: headers, body: Data(other.utf8))
            #expect(response.status == 401)
        }
    }
}
