import AppSyncEventsTransport
import Foundation
import LocalBackend
import SubscriberCore
import Testing

/// Connect-time behaviour of `/event/realtime`, with raw frames (protocols.md §1: handshake, auth, ack, ka, close).
@Suite("AppSync Events conformance: connection")
struct ConnectionConformanceTests {
    @Test("connection_ack carries connectionTimeoutMs at the top level")
    func ackCarriesTimeout() async throws {
        try await withBackend({ $0.connectionTimeoutMs = 12_345 }) { backend in
            let socket = try await backend.open(.apiKey(TestCredentials.apiKey))
            try await socket.send(AppSyncFrames.connectionInit)
            let ack = try await socket.next()
            #expect(ack["type"] as? String == "connection_ack")
            #expect((ack["connectionTimeoutMs"] as? NSNumber)?.intValue == 12_345)
            #expect(ack["payload"] == nil)
            await socket.close()
        }
    }

    @Test("the upgrade echoes aws-appsync-event-ws in Sec-WebSocket-Protocol")
    func subprotocolEchoed() async throws {
        try await withBackend { backend in
            let offered = backend.authorizer(.apiKey(TestCredentials.apiKey)).subprotocols()
            let response = try await RawHTTP.upgrade(host: backend.host, port: backend.port, path: "/event/realtime", subprotocols: offered)
            #expect(response.status == 101)
            #expect(response.header("Sec-WebSocket-Protocol") == "aws-appsync-event-ws")
        }
    }

    @Test("ka arrives every keepAliveInterval after the ack")
    func keepAliveArrives() async throws {
        try await withBackend({ $0.keepAliveInterval = .milliseconds(100) }) { backend in
            let session = try await backend.session(.apiKey(TestCredentials.apiKey))
            let first = try await session.socket.next()
            let second = try await session.socket.next()
            #expect(first["type"] as? String == "ka")
            #expect(second["type"] as? String == "ka")
            await session.close()
        }
    }

    struct AuthCase: Sendable, CustomTestStringConvertible {
        var name: String
        var credentials: AuthCredentials
        var accepted: Bool
        var testDescription: String { name }
    }

    static let authCases: [AuthCase] = [
        AuthCase(name: "API key", credentials: .apiKey(TestCredentials.apiKey), accepted: true),
        AuthCase(name: "wrong API key", credentials: .apiKey("da2-wrong"), accepted: false),
        AuthCase(name: "JWT", credentials: TestCredentials.jwt("u-1"), accepted: true),
        AuthCase(
            name: "JWT signed with another secret",
            credentials: .bearerToken(
                try! DevelopmentToken.make(secret: "another-secret-of-at-least-32-bytes", user: "u-1", ttl: .seconds(60))), accepted: false),
        AuthCase(
            name: "expired JWT",
            credentials: .bearerToken(
                try! DevelopmentToken.make(
                    secret: TestCredentials.jwtSecret, user: "u-1", issuedAt: Date().addingTimeInterval(-120), ttl: .seconds(60))),
            accepted: false),
        AuthCase(name: "not a JWT", credentials: .bearerToken("garbage"), accepted: false),
        AuthCase(name: "IAM, correct signature", credentials: TestCredentials.iam, accepted: true),
        AuthCase(
            name: "IAM, wrong secret",
            credentials: .iam(
                AWSCredentials(accessKeyID: TestCredentials.accessKeyID, secretAccessKey: "wrong", region: TestCredentials.region)),
            accepted: false),
        AuthCase(
            name: "IAM, unknown access key",
            credentials: .iam(AWSCredentials(accessKeyID: "AKIDUNKNOWN", secretAccessKey: "x", region: TestCredentials.region)),
            accepted: false),
        AuthCase(
            name: "IAM, other region",
            credentials: .iam(
                AWSCredentials(
                    accessKeyID: TestCredentials.accessKeyID, secretAccessKey: TestCredentials.secretAccessKey, region: "eu-west-1")),
            accepted: false),
        AuthCase(
            name: "IAM with session token",
            credentials: .iam(
                AWSCredentials(
                    accessKeyID: TestCredentials.accessKeyID, secretAccessKey: TestCredentials.secretAccessKey,
                    sessionToken: "session/token",
                    region: TestCredentials.region)),
            accepted: true),
    ]

    @Test("connect auth: accepted → ack; refused → connection_error UnauthorizedException, then close", arguments: authCases)
    func connectAuth(_ authCase: AuthCase) async throws {
        try await withBackend { backend in
            let socket = try await backend.open(authCase.credentials)
            // A refused socket may already be closing: the send can fail, the reply is there all the same.
            try? await socket.send(AppSyncFrames.connectionInit)
            let reply = try await socket.next()
            if authCase.accepted {
                #expect(reply["type"] as? String == "connection_ack")
            } else {
                #expect(reply["type"] as? String == "connection_error")
                #expect(firstErrorType(reply) == "UnauthorizedException")
                #expect(try await socket.waitForClose() == 1000)
            }
            await socket.close()
        }
    }

    @Test("an expired JWT is refused with a message that says so")
    func expiredTokenMessage() async throws {
        try await withBackend { backend in
            let token = try DevelopmentToken.make(
                secret: TestCredentials.jwtSecret, user: "u-1", issuedAt: Date().addingTimeInterval(-600), ttl: .seconds(60))
            let socket = try await backend.open(.bearerToken(token))
            let reply = try await socket.next()
            #expect(reply["type"] as? String == "connection_error")
            #expect(firstErrorMessage(reply)?.contains("Token expired") == true)
            await socket.close()
        }
    }

    @Test("IAM: x-amz-date more than 5 minutes off is refused")
    func iamClockSkew() async throws {
        try await withBackend { backend in
            let stale = Date().addingTimeInterval(-600)
            let authorizer = backend.authorizer(TestCredentials.iam, now: { stale })
            let socket = try await RawWebSocket.connect(backend.endpoints.realtime, subprotocols: authorizer.subprotocols())
            let reply = try await socket.next()
            #expect(reply["type"] as? String == "connection_error")
            #expect(firstErrorMessage(reply)?.contains("Signature expired") == true)
            await socket.close()
        }
    }

    @Test("auth as plain upgrade headers (as the official Swift SDK sends it) is accepted")
    func plainHeaders() async throws {
        try await withBackend { backend in
            let socket = try await RawWebSocket.connect(
                backend.endpoints.realtime, subprotocols: ["aws-appsync-event-ws"], headers: ["x-api-key": TestCredentials.apiKey])
            try await socket.send(AppSyncFrames.connectionInit)
            #expect(try await socket.next()["type"] as? String == "connection_ack")
            await socket.close()
        }
    }

    @Test("header- subprotocol with padding is accepted")
    func paddedBase64() async throws {
        try await withBackend { backend in
            var json = backend.authorizer(.apiKey(TestCredentials.apiKey)).connectAuthorizationJSON()
            // Make the JSON length not a multiple of 3 so padding appears.
            while json.utf8.count % 3 == 0 { json = json.replacingOccurrences(of: "{", with: "{ ") }
            let padded = Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
                of: "/", with: "_")
            #expect(padded.hasSuffix("="))
            let socket = try await RawWebSocket.connect(
                backend.endpoints.realtime, subprotocols: ["aws-appsync-event-ws", "header-" + padded])
            try await socket.send(AppSyncFrames.connectionInit)
            #expect(try await socket.next()["type"] as? String == "connection_ack")
            await socket.close()
        }
    }

    @Test("a host other than the API's HTTP host is refused")
    func hostMismatch() async throws {
        try await withBackend { backend in
            let other = AppSyncAuthorizer(
                endpoint: try AppSyncEndpoint("http://localhost:\(backend.port)/event"), credentials: .apiKey(TestCredentials.apiKey))
            let socket = try await RawWebSocket.connect(backend.endpoints.realtime, subprotocols: other.subprotocols())
            let reply = try await socket.next()
            #expect(reply["type"] as? String == "connection_error")
            #expect(firstErrorType(reply) == "UnauthorizedException")
            await socket.close()
        }
    }

    @Test("a header- subprotocol that is not base64url JSON is refused")
    func garbageHeader() async throws {
        try await withBackend { backend in
            let socket = try await RawWebSocket.connect(backend.endpoints.realtime, subprotocols: ["aws-appsync-event-ws", "header-!!!"])
            let reply = try await socket.next()
            #expect(reply["type"] as? String == "connection_error")
            await socket.close()
        }
    }

    @Test("Lambda authorizer: its user id is the identity; a denial is connection_error")
    func lambdaAuthorizer() async throws {
        try await withBackend({ configuration in
            configuration.lambdaAuthorizer = { token in token.hasPrefix("let-me-in:") ? String(token.dropFirst("let-me-in:".count)) : nil }
        }) { backend in
            let session = try await backend.session(.lambdaToken("let-me-in:u-7"))
            #expect(try await session.subscribe("vortex-app/user/u-7/*")["type"] as? String == "subscribe_success")
            let refused = try await session.subscribe("vortex-app/user/u-1/*")
            #expect(refused["type"] as? String == "subscribe_error")
            #expect(firstErrorType(refused) == "UnauthorizedException")
            await session.close()

            let denied = try await backend.open(.lambdaToken("nope"))
            #expect(try await denied.next()["type"] as? String == "connection_error")
            await denied.close()
        }
    }

    @Test("maxConnectionDuration: the server closes with 1000")
    func maxDuration() async throws {
        try await withBackend({ $0.maxConnectionDuration = .milliseconds(300) }) { backend in
            let clock = ContinuousClock()
            let opened = clock.now
            let socket = try await backend.open(.apiKey(TestCredentials.apiKey))
            try? await socket.send(AppSyncFrames.connectionInit)
            #expect(try await socket.waitForClose() == 1000)
            #expect(clock.now - opened >= .milliseconds(290))
        }
    }
}
