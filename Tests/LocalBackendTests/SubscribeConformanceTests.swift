import AppSyncEventsTransport
import Foundation
import LocalBackend
import SubscriberCore
import Testing

/// `subscribe` / `unsubscribe` with raw frames (protocols.md §1).
@Suite("AppSync Events conformance: subscribe and unsubscribe")
struct SubscribeConformanceTests {
    struct SubscribeCase: Sendable, CustomTestStringConvertible {
        var name: String
        var credentials: AuthCredentials
        var channel: String
        /// `nil`: success expected.
        var errorType: String?
        var message: String? = nil
        var testDescription: String { name }
    }

    static let cases: [SubscribeCase] = [
        SubscribeCase(name: "own user channel, wildcard", credentials: TestCredentials.jwt("u-1"), channel: "vortex-app/user/u-1/device/*"),
        SubscribeCase(name: "own user channel, exact", credentials: TestCredentials.jwt("u-1"), channel: "vortex-app/user/u-1/roleChanged"),
        SubscribeCase(name: "leading slash", credentials: TestCredentials.jwt("u-1"), channel: "/vortex-app/user/u-1/tokenRevoked"),
        SubscribeCase(name: "shared channel, user", credentials: TestCredentials.jwt("u-1"), channel: "default/news"),
        SubscribeCase(name: "any user channel, API key", credentials: .apiKey(TestCredentials.apiKey), channel: "vortex-app/user/u-2/*"),
        SubscribeCase(name: "whole namespace, IAM", credentials: TestCredentials.iam, channel: "vortex-app/*"),
        SubscribeCase(
            name: "foreign user channel", credentials: TestCredentials.jwt("u-1"), channel: "vortex-app/user/u-2/device/*",
            errorType: "UnauthorizedException"),
        SubscribeCase(
            name: "every user's channels", credentials: TestCredentials.jwt("u-1"), channel: "vortex-app/user/*",
            errorType: "UnauthorizedException"),
        SubscribeCase(
            name: "whole namespace, user", credentials: TestCredentials.jwt("u-1"), channel: "vortex-app/*",
            errorType: "UnauthorizedException"),
        SubscribeCase(
            name: "invalid characters", credentials: .apiKey(TestCredentials.apiKey), channel: "default/bad channel!",
            errorType: "BadRequestException", message: "Invalid Channel Format"),
        SubscribeCase(
            name: "six segments", credentials: .apiKey(TestCredentials.apiKey), channel: "default/a/b/c/d/e",
            errorType: "BadRequestException",
            message: "Invalid Channel Format"),
        SubscribeCase(
            name: "wildcard not last", credentials: .apiKey(TestCredentials.apiKey), channel: "default/*/a",
            errorType: "BadRequestException",
            message: "Invalid Channel Format"),
        SubscribeCase(
            name: "segment over 50 characters", credentials: .apiKey(TestCredentials.apiKey),
            channel: "default/" + String(repeating: "a", count: 51),
            errorType: "BadRequestException", message: "Invalid Channel Format"),
        SubscribeCase(
            name: "unknown namespace", credentials: .apiKey(TestCredentials.apiKey), channel: "nowhere/news",
            errorType: "BadRequestException"),
    ]

    @Test("subscribe → subscribe_success or subscribe_error", arguments: cases)
    func subscribe(_ subscribeCase: SubscribeCase) async throws {
        try await withBackend { backend in
            let session = try await backend.session(subscribeCase.credentials)
            let reply = try await session.subscribe(subscribeCase.channel, id: "sub-1")
            #expect(reply["id"] as? String == "sub-1")
            if let errorType = subscribeCase.errorType {
                #expect(reply["type"] as? String == "subscribe_error")
                #expect(firstErrorType(reply) == errorType)
                if let message = subscribeCase.message { #expect(firstErrorMessage(reply) == message) }
                // The socket and other subscriptions stay up.
                #expect(try await session.subscribe("default/still-alive", id: "sub-2")["type"] as? String == "subscribe_success")
            } else {
                #expect(reply["type"] as? String == "subscribe_success")
            }
            await session.close()
        }
    }

    @Test("subscribe without authorization → UnauthorizedException")
    func missingAuthorization() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            try await session.socket.send(AppSyncFrames.subscribe(id: "s", channel: "default/a", authorization: nil))
            let reply = try await session.socket.nextSkippingKeepAlive()
            #expect(reply["type"] as? String == "subscribe_error")
            #expect(firstErrorType(reply) == "UnauthorizedException")
            await session.close()
        }
    }

    @Test("a foreign-channel refusal leaves the user's other subscription delivering")
    func foreignRefusalKeepsSiblings() async throws {
        try await withBackend { backend in
            let session = try await backend.session(TestCredentials.jwt("u-1"))
            #expect(try await session.subscribe("vortex-app/user/u-1/*", id: "mine")["type"] as? String == "subscribe_success")
            #expect(try await session.subscribe("vortex-app/user/u-2/*", id: "theirs")["type"] as? String == "subscribe_error")
            await backend.server.bus.publish(channel: "vortex-app/user/u-1/roleChanged", events: [#"{"n":1}"#])
            let data = try await session.socket.nextSkippingKeepAlive()
            #expect(data["type"] as? String == "data")
            #expect(data["id"] as? String == "mine")
            await session.close()
        }
    }

    @Test("a duplicate subscription id is rejected; the first one keeps working")
    func duplicateID() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/a", id: "same")["type"] as? String == "subscribe_success")
            let duplicate = try await session.subscribe("default/b", id: "same")
            #expect(duplicate["type"] as? String == "subscribe_error")
            #expect(firstErrorType(duplicate) == "BadRequestException")
            await backend.server.bus.publish(channel: "default/a", events: ["1"])
            #expect(try await session.socket.nextSkippingKeepAlive()["id"] as? String == "same")
            await session.close()
        }
    }

    @Test("the 201st subscription fails with MaxSubscriptionsReachedError; the other 200 stay live")
    func subscriptionLimit() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            for index in 0..<200 {
                let reply = try await session.subscribe("default/c\(index)", id: "s\(index)")
                #expect(reply["type"] as? String == "subscribe_success")
            }
            let over = try await session.subscribe("default/c200", id: "s200")
            #expect(over["type"] as? String == "subscribe_error")
            #expect(firstErrorType(over) == "MaxSubscriptionsReachedError")
            await backend.server.bus.publish(channel: "default/c199", events: ["{}"])
            #expect(try await session.socket.nextSkippingKeepAlive()["id"] as? String == "s199")
            // Unsubscribing one frees a slot.
            try await session.socket.send(AppSyncFrames.unsubscribe(id: "s0"))
            #expect(try await session.socket.nextSkippingKeepAlive()["type"] as? String == "unsubscribe_success")
            #expect(try await session.subscribe("default/c200", id: "s200")["type"] as? String == "subscribe_success")
            await session.close()
        }
    }

    @Test("unsubscribe → unsubscribe_success and no more data; an unknown id → unsubscribe_error")
    func unsubscribe() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/a", id: "a")["type"] as? String == "subscribe_success")
            try await session.socket.send(AppSyncFrames.unsubscribe(id: "a"))
            let done = try await session.socket.nextSkippingKeepAlive()
            #expect(done["type"] as? String == "unsubscribe_success")
            #expect(done["id"] as? String == "a")
            try await session.socket.send(AppSyncFrames.unsubscribe(id: "a"))
            let unknown = try await session.socket.nextSkippingKeepAlive()
            #expect(unknown["type"] as? String == "unsubscribe_error")
            #expect(unknown["id"] as? String == "a")
            #expect(firstErrorType(unknown) != nil)
            let frames = await backend.server.bus.publish(channel: "default/a", events: ["1"])
            #expect(frames == 0)
            await session.close()
        }
    }
}
