import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

/// An ``HTTPClient`` answering every `POST` with 200 and `reply`.
private struct ReplyingHTTPClient: HTTPClient {
    var reply: String

    func post(url: URL, headers: [String: String], body: Data) async throws -> (status: Int, body: Data) { (200, Data(reply.utf8)) }
}

/// The reply to a publish (`publish_success` or the HTTP answer): a loosely written refusal must not turn the events the
/// service accepted into an error, and events the reply leaves out must not read as accepted.
@Suite("AppSync publish replies", .timeLimit(.minutes(2)))
struct PublishResultDecodingTests {
    static let endpoint = try! AppSyncEndpoint("https://abc.appsync-api.us-east-1.amazonaws.com/event")

    /// Publishes `events` over HTTP to a server answering `reply`.
    private func publish(_ events: [String], reply: String) async throws -> PublishResult {
        let publisher = AppSyncHTTPPublisher(endpoint: Self.endpoint, client: ReplyingHTTPClient(reply: reply))
        let authorizer = AppSyncAuthorizer(endpoint: Self.endpoint, credentials: .apiKey("da2-key"))
        return try await publisher.publish(channel: "default/test", events: events, authorizer: authorizer)
    }

    static let accepted = #"{"identifier":"a","index":1}"#

    @Test(
        "a refusal in either SDK's keys, with a code as a number or as text, decodes beside the accepted event",
        arguments: [
            (
                #"{"identifier":"e","index":0,"errorCode":"X","errorMessage":"m"}"#,
                FailedEvent(identifier: "e", index: 0, message: "m", errorType: "X")
            ),
            (
                #"{"identifier":"e","index":0,"errorCode":400,"errorMessage":"m"}"#,
                FailedEvent(identifier: "e", index: 0, code: 400, message: "m")
            ),
            (#"{"identifier":"e","index":0,"code":"400","message":"m"}"#, FailedEvent(identifier: "e", index: 0, code: 400, message: "m")),
            (
                #"{"identifier":"e","index":0,"code":"BadRequestException"}"#,
                FailedEvent(identifier: "e", index: 0, errorType: "BadRequestException")
            ),
            (#"{"index":0,"code":400}"#, FailedEvent(identifier: "", index: 0, code: 400)),
        ])
    func refusal(entry: String, expected: FailedEvent) async throws {
        let result = try await publish(["1", "2"], reply: #"{"successful":[\#(Self.accepted)],"failed":[\#(entry)]}"#)
        #expect(result == PublishResult(successful: [PublishedEvent(identifier: "a", index: 1)], failed: [expected]))
        #expect(!result.allSucceeded)
    }

    @Test(
        "events the reply lists neither as accepted nor as refused are unaccounted, never all succeeded",
        arguments: [
            ("{}", [0, 1]),
            (#"{"successful":[],"failed":[]}"#, [0, 1]),
            (#"{"successful":[{"identifier":"a","index":0}]}"#, [1]),
            (#"{"failed":[{"identifier":"e","index":1,"code":400}]}"#, [0]),
        ])
    func unaccounted(reply: String, expected: [Int]) async throws {
        let result = try await publish(["1", "2"], reply: reply)
        #expect(result.unaccounted == expected)
        #expect(!result.allSucceeded)
    }

    @Test func aRefusalRoundTripsThroughItsOwnEncoding() throws {
        let refusal = FailedEvent(identifier: "e", index: 2, message: "m", errorType: "BadRequestException")
        #expect(try JSONDecoder().decode(FailedEvent.self, from: JSONEncoder().encode(refusal)) == refusal)
    }

    @Test("over the WebSocket: a refusal in the Swift SDK's keys decodes; events left out of the reply are unaccounted")
    func webSocketReply() async throws {
        let harness = try AppSyncHarness()
        let transport = harness.transport
        async let result = transport.publish(PublishRequest(channel: "default/a", events: ["1", "2", "3"]))
        let connection = try await harness.acceptConnection()
        let id = try #require(try await connection.nextSentJSON()["id"] as? String)
        connection.emit(
            #"{"type":"publish_success","id":"\#(id)","successful":[{"identifier":"a","index":1}],"failed":[{"index":0,"errorCode":"X","errorMessage":"m"}]}"#
        )
        #expect(
            try await result
                == PublishResult(
                    successful: [PublishedEvent(identifier: "a", index: 1)],
                    failed: [FailedEvent(identifier: "", index: 0, message: "m", errorType: "X")], unaccounted: [2]))
        await transport.disconnect()
    }
}
