import AppSyncEventsTransport
import AppSyncEventsWire
import Foundation
import LocalBackend
import SubscriberCore
import Testing

/// `publish`, `data` and the `error` message, with raw frames (protocols.md §1).
@Suite("AppSync Events conformance: publish, data, errors")
struct PublishConformanceTests {
    struct PublishErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        var credentials: AuthCredentials
        var channel: String
        var events: [String]
        var errorType: String
        var testDescription: String { name }
    }

    static let oversizedEvent = #"{"blob":""# + String(repeating: "x", count: AppSyncPublishLimits.maxEventBytes) + #""}"#

    static let errorCases: [PublishErrorCase] = [
        PublishErrorCase(
            name: "wildcard channel", credentials: .apiKey(TestCredentials.apiKey), channel: "default/*", events: ["{}"],
            errorType: "BadRequestException"),
        PublishErrorCase(
            name: "invalid channel", credentials: .apiKey(TestCredentials.apiKey), channel: "default/a b", events: ["{}"],
            errorType: "BadRequestException"),
        PublishErrorCase(
            name: "six events", credentials: .apiKey(TestCredentials.apiKey), channel: "default/a",
            events: Array(repeating: "{}", count: 6),
            errorType: "BadRequestException"),
        PublishErrorCase(
            name: "no events", credentials: .apiKey(TestCredentials.apiKey), channel: "default/a", events: [],
            errorType: "BadRequestException"),
        PublishErrorCase(
            name: "event over 240 KB", credentials: .apiKey(TestCredentials.apiKey), channel: "default/a", events: [oversizedEvent],
            errorType: "BadRequestException"),
        PublishErrorCase(
            name: "foreign user channel", credentials: TestCredentials.jwt("u-1"), channel: "vortex-app/user/u-2/roleChanged",
            events: ["{}"],
            errorType: "UnauthorizedException"),
        PublishErrorCase(
            name: "unknown namespace", credentials: .apiKey(TestCredentials.apiKey), channel: "elsewhere/a", events: ["{}"],
            errorType: "BadRequestException"),
    ]

    @Test("publish → publish_error", arguments: errorCases)
    func publishError(_ errorCase: PublishErrorCase) async throws {
        try await withBackend { backend in
            let session = try await backend.session(errorCase.credentials)
            let reply = try await session.publish(errorCase.channel, errorCase.events, id: "p-1")
            #expect(reply["type"] as? String == "publish_error")
            #expect(reply["id"] as? String == "p-1")
            #expect(firstErrorType(reply) == errorCase.errorType)
            // The connection is still usable.
            #expect(try await session.publish("default/ok", ["{}"])["type"] as? String == "publish_success")
            await session.close()
        }
    }

    @Test("publish without authorization → publish_error UnauthorizedException")
    func publishWithoutAuthorization() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            try await session.socket.send(AppSyncFrames.publish(id: "p", channel: "default/a", events: ["{}"], authorization: nil))
            let reply = try await session.socket.nextSkippingKeepAlive()
            #expect(reply["type"] as? String == "publish_error")
            #expect(firstErrorType(reply) == "UnauthorizedException")
            await session.close()
        }
    }

    @Test("publish fans out one data message per event to exact and wildcard subscribers; event is a JSON string")
    func fanOut() async throws {
        try await withBackend { backend in
            let subscriber = try await backend.session(.apiKey(TestCredentials.apiKey))
            let subscriptions = [
                ("exact", "default/news/a"), ("wild", "default/news/*"), ("ns", "default/*"),
                ("deeper", "default/news/a/b"), ("other", "default/sports"), ("parent", "default/news"),
            ]
            for (id, channel) in subscriptions {
                #expect(try await subscriber.subscribe(channel, id: id)["type"] as? String == "subscribe_success")
            }
            let publisher = try await backend.session(TestCredentials.jwt("u-9"))
            let events = [#"{"n":1,"html":"<b>a/b</b>"}"#, #"{"n":2,"text":"quote \" and \\ and é"}"#]
            let reply = try await publisher.publish("default/news/a", events, id: "pub")
            #expect(reply["type"] as? String == "publish_success")
            #expect(reply["id"] as? String == "pub")
            let successful = try #require(reply["successful"] as? [[String: Any]])
            #expect(successful.map { ($0["index"] as? NSNumber)?.intValue } == [0, 1])
            for entry in successful {
                #expect(UUID(uuidString: entry["identifier"] as? String ?? "") != nil)
            }
            #expect((reply["failed"] as? [Any])?.isEmpty == true)

            var received: [String: [String]] = [:]
            for _ in 0..<6 {
                let data = try await subscriber.socket.nextSkippingKeepAlive()
                #expect(data["type"] as? String == "data")
                let event = try #require(data["event"] as? String, "event must be a JSON string")
                received[data["id"] as? String ?? "?", default: []].append(event)
            }
            #expect(received["exact"] == events)
            #expect(received["wild"] == events)
            #expect(received["ns"] == events)
            #expect(received["deeper"] == nil && received["other"] == nil && received["parent"] == nil)
            #expect(try await subscriber.dataBeforeBarrier().isEmpty, "nothing for the channels that do not match")
            await subscriber.close()
            await publisher.close()
        }
    }

    @Test("a wildcard matches deeper channels: ns/a/* receives ns/a/b and ns/a/b/c")
    func wildcardDepth() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/a/*", id: "w")["type"] as? String == "subscribe_success")
            #expect(try await session.publish("default/a/b", ["1"])["type"] as? String == "publish_success")
            #expect(try await session.socket.nextSkippingKeepAlive()["event"] as? String == "1")
            #expect(try await session.publish("default/a/b/c", ["2"])["type"] as? String == "publish_success")
            #expect(try await session.socket.nextSkippingKeepAlive()["event"] as? String == "2")
            await session.close()
        }
    }

    @Test("an event that is not JSON fails alone: publish_success lists it under failed")
    func partialPublish() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/p", id: "s")["type"] as? String == "subscribe_success")
            let reply = try await session.publish("default/p", [#"{"ok":1}"#, "not json", #"{"ok":2}"#], id: "mixed")
            #expect(reply["type"] as? String == "publish_success")
            let successful = try #require(reply["successful"] as? [[String: Any]])
            let failed = try #require(reply["failed"] as? [[String: Any]])
            #expect(successful.compactMap { ($0["index"] as? NSNumber)?.intValue } == [0, 2])
            #expect(failed.compactMap { ($0["index"] as? NSNumber)?.intValue } == [1])
            #expect(failed.first?["identifier"] is String)
            let first = try await session.socket.nextSkippingKeepAlive()
            let second = try await session.socket.nextSkippingKeepAlive()
            #expect([first["event"] as? String, second["event"] as? String] == [#"{"ok":1}"#, #"{"ok":2}"#])
            await session.close()
        }
    }

    struct BadFrameCase: Sendable, CustomTestStringConvertible {
        var name: String
        var frame: String
        var errorType: String
        var id: String?
        /// A publish is answered with `publish_error` (`id?`, protocols.md §1), anything else with `error`.
        var replyType = "error"
        var testDescription: String { name }
    }

    static let badFrames: [BadFrameCase] = [
        BadFrameCase(name: "malformed JSON", frame: #"{"type":"subscribe","#, errorType: "BadRequestException"),
        BadFrameCase(name: "not an object", frame: "[1,2,3]", errorType: "BadRequestException"),
        BadFrameCase(name: "no type", frame: #"{"id":"x"}"#, errorType: "BadRequestException", id: "x"),
        BadFrameCase(name: "unknown type", frame: #"{"type":"start","id":"u-1"}"#, errorType: "UnsupportedOperation", id: "u-1"),
        BadFrameCase(name: "subscribe without id", frame: #"{"type":"subscribe","channel":"default/a"}"#, errorType: "BadRequestException"),
        BadFrameCase(name: "unsubscribe without id", frame: #"{"type":"unsubscribe"}"#, errorType: "BadRequestException"),
        BadFrameCase(
            name: "publish without id", frame: #"{"type":"publish","channel":"default/a","events":["{}"]}"#,
            errorType: "BadRequestException",
            replyType: "publish_error"),
    ]

    @Test("bad frames → error with an errorType; the server and the connection survive", arguments: badFrames)
    func badFrame(_ badFrame: BadFrameCase) async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            try await session.socket.send(badFrame.frame)
            let reply = try await session.socket.nextSkippingKeepAlive()
            #expect(reply["type"] as? String == badFrame.replyType)
            #expect(firstErrorType(reply) == badFrame.errorType)
            #expect(reply["id"] as? String == badFrame.id)
            #expect(try await session.subscribe("default/after")["type"] as? String == "subscribe_success")
            let other = try await backend.session(.apiKey(TestCredentials.apiKey))
            await other.close()
            await session.close()
        }
    }

    @Test("a message over the limit → error, and the connection goes on")
    func oversizedMessage() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            let huge = #"{"type":"publish","id":"big","pad":""# + String(repeating: "y", count: LocalBackendServer.maxMessageBytes) + #""}"#
            try await session.socket.send(huge)
            let reply = try await session.socket.nextSkippingKeepAlive(timeout: .seconds(10))
            #expect(reply["type"] as? String == "error")
            #expect(firstErrorType(reply) == "BadRequestException")
            #expect(try await session.subscribe("default/after")["type"] as? String == "subscribe_success")
            await session.close()
        }
    }

    @Test("IAM: subscribe and publish are signed over their exact bodies, <, > and / included")
    func iamSignedOperations() async throws {
        try await withBackend { backend in
            let session = try await backend.session(TestCredentials.iam)
            #expect(try await session.subscribe("default/iam")["type"] as? String == "subscribe_success")
            let events = [#"{"html":"<script>a/b</script>","unicode":"ü → ✓"}"#]
            let reply = try await session.publish("default/iam", events)
            #expect(reply["type"] as? String == "publish_success")
            #expect(try await session.socket.nextSkippingKeepAlive()["event"] as? String == events[0])

            // A signature over a different body is refused.
            let wrongAuth = session.authorizer.authorization(body: AppSyncFrames.publishBody("default/iam", ["{}"]))
            try await session.socket.send(
                AppSyncFrames.publish(id: "forged", channel: "default/iam", events: ["{\"x\":1}"], authorization: wrongAuth))
            let forged = try await session.socket.nextSkippingKeepAlive()
            #expect(forged["type"] as? String == "publish_error")
            #expect(firstErrorType(forged) == "UnauthorizedException")
            await session.close()
        }
    }
}
