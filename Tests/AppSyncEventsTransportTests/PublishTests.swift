import AppSyncEventsWire
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

/// A JSON string event of exactly `bytes` UTF-8 bytes (quotes included).
private func stringEvent(bytes: Int, filler: String = "a") -> String {
    let fillerBytes = filler.utf8.count
    precondition((bytes - 2) % fillerBytes == 0)
    return "\"" + String(repeating: filler, count: (bytes - 2) / fillerBytes) + "\""
}

/// One `validate` case; described by name so huge events do not flood the test log.
struct PublishLimitCase: Sendable, CustomTestStringConvertible {
    var name: String
    var events: [String]
    var testDescription: String { name }
}

@Suite("AppSyncPublishLimits")
struct AppSyncPublishLimitsTests {
    static let limit = 240 * 1024

    static let rejected: [PublishLimitCase] = [
        .init(name: "no events", events: []),
        .init(name: "6 events", events: Array(repeating: #"{"a":1}"#, count: 6)),
        .init(name: "100 events", events: Array(repeating: "1", count: 100)),
        .init(name: "an event of 240 KiB + 1 byte", events: [stringEvent(bytes: limit + 1)]),
        .init(name: "a multi-byte event of 240 KiB + 2 bytes", events: [stringEvent(bytes: limit + 2, filler: "é")]),
        .init(name: "a valid event then an oversize one", events: ["1", stringEvent(bytes: limit + 1)]),
        .init(name: "unquoted key", events: ["{a:1}"]),
        .init(name: "empty text", events: [""]),
        .init(name: "unterminated object", events: [#"{"a":1"#]),
        .init(name: "bare word", events: ["hello"]),
        .init(name: "single quotes", events: ["'x'"]),
        .init(name: "trailing garbage", events: [#"{"a":1}}"#]),
        .init(name: "two values", events: ["1 2"]),
        .init(name: "valid then invalid", events: ["1", "[1,2", "3"]),
    ]

    static let accepted: [PublishLimitCase] = [
        .init(name: "1 event", events: [#"{"a":1}"#]),
        .init(name: "5 events", events: [#"{"a":1}"#, "[1,2]", #""text""#, "42", "null"]),
        .init(name: "fragments", events: ["true", "false", "-1.5e3", #""""#]),
        .init(name: "an event of exactly 240 KiB", events: [stringEvent(bytes: limit)]),
        .init(name: "a multi-byte event of exactly 240 KiB", events: [stringEvent(bytes: limit, filler: "é")]),
        .init(name: "5 events of exactly 240 KiB", events: Array(repeating: stringEvent(bytes: limit), count: 5)),
        .init(name: "white space around a value", events: [" {\"a\" : [1, 2]}\n"]),
    ]

    @Test("invalid publishes throw invalidPublish", arguments: rejected)
    func rejects(testCase: PublishLimitCase) {
        let error = #expect(throws: RealtimeError.self) { try AppSyncPublishLimits.validate(testCase.events) }
        guard case .invalidPublish(let reason)? = error else {
            Issue.record("expected invalidPublish, got \(String(describing: error))")
            return
        }
        #expect(!reason.isEmpty)
    }

    @Test("valid publishes pass", arguments: accepted)
    func accepts(testCase: PublishLimitCase) throws {
        try AppSyncPublishLimits.validate(testCase.events)
    }

    @Test func sizeIsCountedInUTF8Bytes() throws {
        // 122,879 two-byte characters plus the quotes: exactly the limit in bytes, about half of it in characters.
        let justFits = stringEvent(bytes: Self.limit, filler: "é")
        #expect(justFits.count == Self.limit / 2 + 1)
        try AppSyncPublishLimits.validate([justFits])
        let error = #expect(throws: RealtimeError.self) {
            try AppSyncPublishLimits.validate([stringEvent(bytes: Self.limit + 2, filler: "é")])
        }
        guard case .invalidPublish(let reason)? = error else {
            Issue.record("expected invalidPublish")
            return
        }
        #expect(reason.contains("\(Self.limit + 2)"))
    }

    @Test func limitsMatchTheService() {
        #expect(AppSyncPublishLimits.maxEvents == 5)
        #expect(AppSyncPublishLimits.maxEventBytes == 245_760)
    }
}

/// A request the fake client received.
private struct RecordedRequest: Sendable {
    var url: URL
    var headers: [String: String]
    var body: Data
}

/// An ``HTTPClient`` that records requests and answers with a scripted status and body (or error).
private final class RecordingHTTPClient: HTTPClient {
    let status: Int
    let reply: Data
    let failure: (any Error)?
    /// Runs on every request, before it is answered.
    let onPost: @Sendable () -> Void
    private let recorded = Locked<[RecordedRequest]>([])

    init(
        status: Int = 200, reply: String = #"{"successful":[{"identifier":"e","index":0}],"failed":[]}"#, failure: (any Error)? = nil,
        onPost: @escaping @Sendable () -> Void = {}
    ) {
        self.status = status
        self.reply = Data(reply.utf8)
        self.failure = failure
        self.onPost = onPost
    }

    var requests: [RecordedRequest] { recorded.withLock { $0 } }

    func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data) {
        recorded.withLock { $0.append(RecordedRequest(url: url, headers: headers, body: body)) }
        onPost()
        if let failure { throw failure }
        return (status, reply)
    }
}

private struct NetworkDown: Error {}

@Suite("AppSyncHTTPPublisher")
struct AppSyncHTTPPublisherTests {
    static let endpoint = try! AppSyncEndpoint("https://abc.appsync-api.us-east-1.amazonaws.com/event")
    static let host = "abc.appsync-api.us-east-1.amazonaws.com"

    private func publish(
        _ client: RecordingHTTPClient, channel: String = "default/test", events: [String] = [#"{"a":1}"#],
        credentials: AuthCredentials = .apiKey("da2-key")
    ) async throws -> PublishResult {
        let publisher = AppSyncHTTPPublisher(endpoint: Self.endpoint, client: client)
        let authorizer = AppSyncAuthorizer(endpoint: Self.endpoint, credentials: credentials)
        return try await publisher.publish(channel: channel, events: events, authorizer: authorizer)
    }

    @Test func sendsTheExactBodyAndAPIKeyHeaders() async throws {
        let client = RecordingHTTPClient()
        _ = try await publish(client)
        let request = try #require(client.requests.first)
        #expect(client.requests.count == 1)
        #expect(request.url == Self.endpoint.httpURL)
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"channel":"default/test","events":["{\"a\":1}"]}"#)
        #expect(request.headers["x-api-key"] == "da2-key")
        #expect(request.headers["host"] == Self.host)
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["Authorization"] == nil)
    }

    @Test(
        "the body normalises the channel and keeps events verbatim",
        arguments: [
            ("/default/test", [#"{"a":1}"#], #"{"channel":"default/test","events":["{\"a\":1}"]}"#),
            (
                "vortex-app/user/u-1/device/presenceChanged", ["1", #""x/y<z>""#],
                #"{"channel":"vortex-app/user/u-1/device/presenceChanged","events":["1","\"x/y<z>\""]}"#
            ),
            ("default/test", [#"{"t":"é🚀\n"}"#], #"{"channel":"default/test","events":["{\"t\":\"é🚀\\n\"}"]}"#),
        ])
    func body(channel: String, events: [String], expected: String) async throws {
        let client = RecordingHTTPClient()
        _ = try await publish(client, channel: channel, events: events)
        let body = try #require(client.requests.first?.body)
        #expect(String(decoding: body, as: UTF8.self) == expected)
        // The body is JSON whose events decode back to the given texts.
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["events"] as? [String] == events)
    }

    @Test("token credentials go in Authorization", arguments: [AuthCredentials.bearerToken("jwt-1"), .lambdaToken("lambda-1")])
    func tokenHeaders(credentials: AuthCredentials) async throws {
        let client = RecordingHTTPClient()
        _ = try await publish(client, credentials: credentials)
        let headers = try #require(client.requests.first?.headers)
        let token: String? =
            switch credentials {
            case .bearerToken(let token), .lambdaToken(let token): token
            default: nil
            }
        #expect(headers["Authorization"] == token)
        #expect(headers["host"] == Self.host)
        #expect(headers["x-api-key"] == nil)
    }

    @Test func partialFailureDecodesIntoPublishResult() async throws {
        let client = RecordingHTTPClient(
            status: 200,
            reply: #"""
                {"successful":[{"identifier":"id-0","index":0}],
                 "failed":[{"identifier":"id-1","index":1,"code":400,"message":"bad event"}]}
                """#)
        let result = try await publish(client, events: ["1", "2"])
        #expect(
            result
                == PublishResult(
                    successful: [PublishedEvent(identifier: "id-0", index: 0)],
                    failed: [FailedEvent(identifier: "id-1", index: 1, code: 400, message: "bad event")]))
        #expect(result.allSucceeded == false)
    }

    @Test(
        "successful replies",
        arguments: [
            (#"{"successful":[{"identifier":"a","index":0},{"identifier":"b","index":1}],"failed":[]}"#, 2),
            (#"{"successful":[{"identifier":"a","index":0}]}"#, 1),
        ])
    func allSucceeded(reply: String, successes: Int) async throws {
        let events = Array(repeating: "1", count: successes)
        let result = try await publish(RecordingHTTPClient(status: 200, reply: reply), events: events)
        #expect(result.successful.count == successes)
        #expect(result.failed.isEmpty && result.unaccounted.isEmpty)
        #expect(result.allSucceeded)
    }

    @Test(
        "non-2xx replies throw publishRejected",
        arguments: [
            (
                401, #"{"errors":[{"errorType":"UnauthorizedException","message":"x"}]}"#,
                RealtimeError.publishRejected(errorType: "UnauthorizedException", message: "x")
            ),
            (
                400, #"{"errors":[{"errorType":"BadRequestException","message":"too big"}]}"#,
                .publishRejected(errorType: "BadRequestException", message: "too big")
            ),
            (500, "oops", .publishRejected(errorType: "HTTP 500", message: "oops")),
            (503, "", .publishRejected(errorType: "HTTP 503", message: "")),
            (302, "{}", .publishRejected(errorType: "HTTP 302", message: "{}")),
        ])
    func rejected(status: Int, reply: String, expected: RealtimeError) async throws {
        await #expect(throws: expected) {
            try await publish(RecordingHTTPClient(status: status, reply: reply))
        }
    }

    @Test func malformedSuccessReplyIsAProtocolViolation() async throws {
        let error = await #expect(throws: RealtimeError.self) {
            try await publish(RecordingHTTPClient(status: 200, reply: "not json"))
        }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func clientFailureIsANetworkError() async throws {
        let error = await #expect(throws: RealtimeError.self) {
            try await publish(RecordingHTTPClient(failure: NetworkDown()))
        }
        guard case .network? = error else {
            Issue.record("expected network, got \(String(describing: error))")
            return
        }
    }

    @Test("invalid channels throw before any request", arguments: ["default/*", "/default/*", "a//b", "", "-ns/x", "a/b/c/d/e/f"])
    func invalidChannel(channel: String) async throws {
        let client = RecordingHTTPClient()
        let error = await #expect(throws: RealtimeError.self) { try await publish(client, channel: channel) }
        guard case .invalidChannel(let reported, _)? = error else {
            Issue.record("expected invalidChannel, got \(String(describing: error))")
            return
        }
        #expect(reported == channel)
        #expect(client.requests.isEmpty)
    }

    @Test("invalid events throw before any request", arguments: [[], Array(repeating: "1", count: 6), ["{bad"]])
    func invalidEvents(events: [String]) async throws {
        let client = RecordingHTTPClient()
        let error = await #expect(throws: RealtimeError.self) { try await publish(client, events: events) }
        guard case .invalidPublish? = error else {
            Issue.record("expected invalidPublish, got \(String(describing: error))")
            return
        }
        #expect(client.requests.isEmpty)
    }
}

/// The HTTP route bounds its wait for credentials as the WebSocket route does: `link.ackTimeout` on the transport's
/// clock (a `ManualClock` here, so nothing sleeps).
@Suite("AppSync Events: HTTP publish waits for credentials at most the ack timeout")
struct AppSyncHTTPPublishCredentialsDeadlineTests {
    /// Not the 15 s default, so a bound taken from anywhere else shows.
    static let timeout: Duration = .seconds(7)
    static let request = PublishRequest(channel: "default/p", events: ["1"])

    /// An HTTP-route transport on `clock`, its `link.ackTimeout` ``timeout``.
    private static func transport(
        _ auth: ScriptedAuthSession, _ client: RecordingHTTPClient, _ clock: ManualClock
    ) throws -> AppSyncEventsTransport {
        var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(AppSyncHarness.endpointText))
        configuration.publishRoute = .http
        configuration.link.ackTimeout = timeout
        return AppSyncEventsTransport(
            configuration: configuration, auth: auth, connector: ScriptedWebSocketServer(), httpClient: client, clock: clock)
    }

    /// Publishes while `auth` holds its credentials, lets the deadline pass and expects publish's timeout error.
    private static func expectCredentialsTimeout(
        publishing transport: AppSyncEventsTransport, _ auth: ScriptedAuthSession, _ clock: ManualClock
    ) async throws {
        let publishing = Task { try await transport.publish(request) }
        try await auth.waitForHeldCalls(1)
        try await clock.waitForSleeper(sleeping: timeout)
        clock.advance(by: timeout)
        await #expect(throws: RealtimeError.network("the AuthSession gave no credentials within 7.0 seconds to publish to default/p")) {
            try await publishing.boundedValue()
        }
    }

    @Test("a token provider that never answers: publish throws a network error once the ack timeout passes; nothing is posted")
    func hungProviderTimesOut() async throws {
        let (auth, client, clock) = (ScriptedAuthSession(), RecordingHTTPClient(), ManualClock())
        auth.holdCredentials()  // ignores cancellation, as a hung identity provider would
        defer { auth.releaseCredentials() }
        let transport = try Self.transport(auth, client, clock)
        try await Self.expectCredentialsTimeout(publishing: transport, auth, clock)
        #expect(client.requests.isEmpty)
        #expect(auth.credentialRequests == [false])
        #expect(clock.sleeperCount == 0)
    }

    @Test("the refresh after an unauthorized refusal is bounded too: one POST, then the timeout")
    func hungRefreshTimesOut() async throws {
        let (auth, clock) = (ScriptedAuthSession(), ManualClock())
        let client = RecordingHTTPClient(
            status: 401, reply: #"{"errors":[{"errorType":"UnauthorizedException","message":"Token expired"}]}"#,
            onPost: { auth.holdCredentials() })
        defer { auth.releaseCredentials() }
        let transport = try Self.transport(auth, client, clock)
        try await Self.expectCredentialsTimeout(publishing: transport, auth, clock)
        #expect(client.requests.count == 1)
        #expect(auth.credentialRequests == [false, true])
    }

    @Test("a provider answering just within the ack timeout: the publish goes out with its credentials")
    func slowProviderWithinTheTimeout() async throws {
        let (auth, client, clock) = (ScriptedAuthSession(.bearerToken("jwt-slow")), RecordingHTTPClient(), ManualClock())
        auth.holdCredentials()
        let transport = try Self.transport(auth, client, clock)
        let publishing = Task { try await transport.publish(Self.request) }
        try await auth.waitForHeldCalls(1)
        try await clock.waitForSleeper(sleeping: Self.timeout)
        clock.advance(by: Self.timeout - .milliseconds(1))
        auth.releaseCredentials()
        #expect(try await publishing.boundedValue().allSucceeded)
        #expect(client.requests.map { $0.headers["Authorization"] } == ["jwt-slow"])
        #expect(clock.sleeperCount == 0, "the deadline's timer ends with the answer")
    }

    @Test("cancelling the publishing task while the provider hangs throws CancellationError; nothing is posted")
    func cancelledWhileProviderHangs() async throws {
        let (auth, client, clock) = (ScriptedAuthSession(), RecordingHTTPClient(), ManualClock())
        auth.holdCredentials()
        defer { auth.releaseCredentials() }
        let transport = try Self.transport(auth, client, clock)
        let publishing = Task { try await transport.publish(Self.request) }
        try await auth.waitForHeldCalls(1)
        publishing.cancel()
        await #expect(throws: CancellationError.self) { try await publishing.boundedValue() }
        #expect(client.requests.isEmpty)
        #expect(auth.heldCount == 1, "the session's call is still held: the publish did not wait for it")
        #expect(clock.sleeperCount == 0)
    }
}
