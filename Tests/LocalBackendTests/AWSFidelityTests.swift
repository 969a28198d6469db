import AppSyncEventsTransport
import AppSyncEventsWire
import Foundation
import LocalBackend
import SubscriberCore
import Testing

/// Where the backend follows the service rather than being stricter (issue 12): `host` optional in operation
/// authorization except for IAM, the published channel and id patterns, `UnknownOperationError`, and namespaces.
@Suite("AppSync Events fidelity: host, channel and id patterns, namespaces")
struct AWSFidelityTests {
    // MARK: host in subscribe/publish authorization

    static let hostlessCredentials: [AuthCredentials] = [.apiKey(TestCredentials.apiKey), TestCredentials.jwt("u-1")]

    @Test("subscribe and publish without host are accepted for API key and JWT", arguments: hostlessCredentials)
    func hostOptional(credentials: AuthCredentials) async throws {
        try await withBackend { backend in
            let session = try await backend.session(credentials)
            var subscribeAuth = session.authorizer.authorization(body: AppSyncFrames.subscribeBody("default/a"))
            let removed = subscribeAuth.removeValue(forKey: "host")
            #expect(removed != nil)
            try await session.socket.send(AppSyncFrames.subscribe(id: "s", channel: "default/a", authorization: subscribeAuth))
            let subscribed = try await session.socket.nextSkippingKeepAlive()
            #expect(subscribed["type"] as? String == "subscribe_success", "\(subscribed)")

            var publishAuth = session.authorizer.authorization(body: AppSyncFrames.publishBody("default/a", ["1"]))
            publishAuth["host"] = nil
            try await session.socket.send(AppSyncFrames.publish(id: "p", channel: "default/a", events: ["1"], authorization: publishAuth))
            let published = try await session.socket.nextSkippingKeepAlive()
            #expect(published["type"] as? String == "publish_success", "\(published)")
            let data = try await session.socket.nextSkippingKeepAlive()
            #expect(data["type"] as? String == "data")
            #expect(data["id"] as? String == "s")
            await session.close()
        }
    }

    @Test("a host that is present is still checked", arguments: hostlessCredentials)
    func wrongHostRefused(credentials: AuthCredentials) async throws {
        try await withBackend { backend in
            let session = try await backend.session(credentials)
            var auth = session.authorizer.authorization(body: AppSyncFrames.subscribeBody("default/a"))
            auth["host"] = "elsewhere.example.com"
            try await session.socket.send(AppSyncFrames.subscribe(id: "s", channel: "default/a", authorization: auth))
            let reply = try await session.socket.nextSkippingKeepAlive()
            #expect(reply["type"] as? String == "subscribe_error")
            #expect(firstErrorType(reply) == "UnauthorizedException")
            #expect(firstErrorMessage(reply)?.contains("host") == true)
            await session.close()
        }
    }

    @Test("IAM still needs host in subscribe and publish: the signature covers it")
    func iamNeedsHost() async throws {
        try await withBackend { backend in
            let session = try await backend.session(TestCredentials.iam)
            var auth = session.authorizer.authorization(body: AppSyncFrames.subscribeBody("default/a"))
            auth["host"] = nil
            try await session.socket.send(AppSyncFrames.subscribe(id: "s", channel: "default/a", authorization: auth))
            let refused = try await session.socket.nextSkippingKeepAlive()
            #expect(refused["type"] as? String == "subscribe_error")
            #expect(firstErrorType(refused) == "UnauthorizedException")
            #expect(firstErrorMessage(refused)?.contains("host") == true)

            var publishAuth = session.authorizer.authorization(body: AppSyncFrames.publishBody("default/a", ["1"]))
            publishAuth["host"] = nil
            try await session.socket.send(AppSyncFrames.publish(id: "p", channel: "default/a", events: ["1"], authorization: publishAuth))
            let publishRefused = try await session.socket.nextSkippingKeepAlive()
            #expect(publishRefused["type"] as? String == "publish_error")
            #expect(firstErrorType(publishRefused) == "UnauthorizedException")
            // With host the same signature scheme passes.
            #expect(try await session.subscribe("default/a", id: "s2")["type"] as? String == "subscribe_success")
            await session.close()
        }
    }

    @Test("the connect authorization still needs host")
    func connectNeedsHost() async throws {
        try await withBackend { backend in
            let auth = #"{"x-api-key":"\#(TestCredentials.apiKey)"}"#
            let socket = try await RawWebSocket.connect(
                backend.endpoints.realtime,
                subprotocols: ["aws-appsync-event-ws", "header-" + Base64URL.encode(Data(auth.utf8))])
            // A refused socket may already be closing: the send can fail, the reply is there all the same.
            try? await socket.send(AppSyncFrames.connectionInit)
            let reply = try await socket.next()
            #expect(reply["type"] as? String == "connection_error")
            await socket.close()
        }
    }

    // MARK: Channel pattern

    @Test(
        "channels follow AWS's pattern: optional leading and trailing /, every segment alphanumeric at both ends",
        arguments: [
            ("default/a/", "subscribe_success"),
            ("/default/a/", "subscribe_success"),
            ("default/", "subscribe_success"),
            ("default/a-b/c", "subscribe_success"),
            ("default/-bad-", "subscribe_error"),
            ("default/bad-", "subscribe_error"),
            ("default/a/b/c/d/e", "subscribe_error"),
            ("default/*/", "subscribe_error"),
        ])
    func channelPattern(channel: String, expected: String) async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            let reply = try await session.subscribe(channel, id: "s")
            #expect(reply["type"] as? String == expected, "\(channel): \(reply)")
            if expected == "subscribe_error" { #expect(firstErrorMessage(reply) == "Invalid Channel Format") }
            await session.close()
        }
    }

    @Test("a subscription to default/a/ receives what is published to default/a (and the other way round)")
    func trailingSlashIsTheSameChannel() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("default/a/", id: "s")["type"] as? String == "subscribe_success")
            #expect(try await session.publish("default/a", [#"{"n":1}"#], id: "p1")["type"] as? String == "publish_success")
            let first = try await session.socket.nextSkippingKeepAlive()
            #expect(first["id"] as? String == "s")
            #expect(try await session.publish("/default/a/", [#"{"n":2}"#], id: "p2")["type"] as? String == "publish_success")
            let second = try await session.socket.nextSkippingKeepAlive()
            #expect(second["event"] as? String == #"{"n":2}"#)
            await session.close()
        }
    }

    @Test("publishing to default/-bad- is refused with Invalid Channel Format")
    func publishBadSegment() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            let reply = try await session.publish("default/-bad-", ["1"], id: "p")
            #expect(reply["type"] as? String == "publish_error")
            #expect(firstErrorMessage(reply) == "Invalid Channel Format")
            await session.close()
        }
    }

    // MARK: Message ids

    @Test(
        "ids must match ^[a-zA-Z0-9-_+]{1,128}$",
        arguments: [
            ("a", true), ("request-sub", true), ("A_b+c-9", true), (String(repeating: "x", count: 128), true),
            (String(repeating: "x", count: 129), false), ("has space", false), ("dot.ted", false), ("slash/", false), ("é", false),
            ("a=b", false),
        ])
    func idPattern(id: String, valid: Bool) async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            let subscribed = try await session.subscribe("default/a", id: id)
            #expect(subscribed["id"] as? String == id)
            #expect(subscribed["type"] as? String == (valid ? "subscribe_success" : "subscribe_error"))
            let published = try await session.publish("default/b", ["1"], id: id)
            #expect(published["id"] as? String == id)
            #expect(published["type"] as? String == (valid ? "publish_success" : "publish_error"))
            if !valid {
                #expect(firstErrorType(subscribed) == "BadRequestException")
                #expect(firstErrorType(published) == "BadRequestException")
                try await session.socket.send(AppSyncFrames.unsubscribe(id: id))
                let unsubscribed = try await session.socket.nextSkippingKeepAlive()
                #expect(unsubscribed["type"] as? String == "unsubscribe_error")
                #expect(firstErrorType(unsubscribed) == "BadRequestException")
            }
            await session.close()
        }
    }

    @Test("unsubscribe of an unknown id → unsubscribe_error with UnknownOperationError")
    func unknownOperation() async throws {
        try await withBackend { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            try await session.socket.send(AppSyncFrames.unsubscribe(id: "never-subscribed"))
            let reply = try await session.socket.nextSkippingKeepAlive()
            #expect(reply["type"] as? String == "unsubscribe_error")
            #expect(reply["id"] as? String == "never-subscribed")
            #expect(firstErrorType(reply) == "UnknownOperationError")
            #expect(firstErrorMessage(reply) == "Unknown operation id never-subscribed")
            await session.close()
        }
    }

    // MARK: Namespaces

    @Test("the default namespaces are vortex-app and default")
    func defaultNamespaces() {
        #expect(LocalBackendConfiguration().namespaces == ["vortex-app", "default"])
        #expect(LocalBackendConfiguration.defaultNamespaces == ["vortex-app", "default"])
    }

    @Test("declared namespaces replace the defaults")
    func declaredNamespaces() async throws {
        try await withBackend({ $0.namespaces = ["stelvio", "vortex-app"] }) { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await session.subscribe("/stelvio/app/dev/out", id: "s1")["type"] as? String == "subscribe_success")
            #expect(try await session.subscribe("vortex-app/user/u-1/*", id: "s2")["type"] as? String == "subscribe_success")
            let refused = try await session.subscribe("default/a", id: "s3")
            #expect(refused["type"] as? String == "subscribe_error")
            #expect(firstErrorMessage(refused) == "Namespace default does not exist")
            let publishRefused = try await session.publish("default/a", ["1"], id: "p")
            #expect(publishRefused["type"] as? String == "publish_error")
            await session.close()
        }
    }

    @Test("start refuses namespaces the service would not accept", arguments: [[], ["ok", "-bad"], ["a/b"], ["has space"], [""]])
    func invalidNamespaces(namespaces: [String]) async throws {
        var configuration = LocalBackendConfiguration()
        configuration.namespaces = namespaces
        let server = LocalBackendServer(configuration: configuration, logger: testLogger)
        await #expect(throws: LocalBackendError.self) { try await server.start() }
        await server.stop()
    }
}
