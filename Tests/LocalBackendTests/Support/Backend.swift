import AppSyncEventsTransport
import Foundation
import LocalBackend
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

/// Fixed credentials every test server accepts.
enum TestCredentials {
    static let apiKey = "da2-local-test-key"
    static let jwtSecret = "local-test-jwt-secret-of-32-bytes-or-more"
    static let accessKeyID = "AKIDLOCALTEST"
    static let secretAccessKey = "local/test+secret-access-key"
    static let region = "us-east-1"

    static var iam: AuthCredentials {
        .iam(AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, region: region))
    }

    static func jwt(_ user: String, ttl: Duration = .seconds(600)) -> AuthCredentials {
        .bearerToken(try! DevelopmentToken.make(secret: jwtSecret, user: user, ttl: ttl))
    }
}

/// A started server and what tests need to talk to it.
struct Backend: Sendable {
    let server: LocalBackendServer
    let endpoints: LocalBackendEndpoints
    let endpoint: AppSyncEndpoint

    var host: String { endpoint.httpURL.host ?? "127.0.0.1" }
    var port: Int { endpoint.httpURL.port ?? 0 }

    func authorizer(_ credentials: AuthCredentials, now: @escaping @Sendable () -> Date = { Date() }) -> AppSyncAuthorizer {
        AppSyncAuthorizer(endpoint: endpoint, credentials: credentials, now: now)
    }

    /// Opens a raw socket with the `header-` subprotocol for `credentials` (no `connection_init` sent).
    func open(_ credentials: AuthCredentials) async throws -> RawWebSocket {
        try await RawWebSocket.connect(endpoints.realtime, subprotocols: authorizer(credentials).subprotocols())
    }

    /// Opens a raw session, sends `connection_init` and checks the `connection_ack`.
    func session(_ credentials: AuthCredentials) async throws -> RawSession {
        let socket = try await open(credentials)
        try await socket.send(AppSyncFrames.connectionInit)
        let ack = try await socket.next()
        #expect(ack["type"] as? String == "connection_ack", "expected connection_ack, got \(ack)")
        return RawSession(socket: socket, authorizer: authorizer(credentials))
    }
}

/// A quiet logger for servers under test (set `LOCAL_BACKEND_TEST_LOG=debug` to see them).
let testLogger: Logger = {
    var logger = Logger(label: "local-backend-test")
    logger.logLevel = ProcessInfo.processInfo.environment["LOCAL_BACKEND_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()

/// Starts a server on a free port with the test credentials (API key, JWT secret, IAM) and admin on, runs `body`,
/// and stops the server whatever happens.
func withBackend(
    _ configure: (inout LocalBackendConfiguration) -> Void = { _ in },
    _ body: (Backend) async throws -> Void
) async throws {
    var configuration = LocalBackendConfiguration()
    configuration.apiKeys = [TestCredentials.apiKey]
    configuration.jwtSecret = TestCredentials.jwtSecret
    configuration.iamCredentials = [TestCredentials.accessKeyID: TestCredentials.secretAccessKey]
    configuration.admin = true
    // A real-time deadline only the tests about it may meet (they set their own): under the soak's burners a fan-out
    // test's connection_init outlasted the default 3 s (closed 4408). Stretched with the others under a sanitizer's
    // slowdown (VORTEX_TEST_TIME_SCALE).
    configuration.graphQLInitTimeout = TestTime.scaled(.seconds(scriptedWait))
    configure(&configuration)
    let server = LocalBackendServer(configuration: configuration, logger: testLogger)
    let endpoints = try await server.start()
    let backend = Backend(server: server, endpoints: endpoints, endpoint: try AppSyncEndpoint(endpoints.http))
    do {
        try await body(backend)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
}

/// The text frames of the AppSync Events protocol, built the way the client builds them.
enum AppSyncFrames {
    static let connectionInit = #"{"type":"connection_init"}"#

    static func subscribeBody(_ channel: String) -> String {
        JSONString.object([(key: "channel", json: JSONString.quoted(channel))])
    }

    static func publishBody(_ channel: String, _ events: [String]) -> String {
        JSONString.object([
            (key: "channel", json: JSONString.quoted(channel)),
            (key: "events", json: JSONString.array(events.map(JSONString.quoted))),
        ])
    }

    static func subscribe(id: String, channel: String, authorization: [String: String]?) -> String {
        var members = [
            (key: "type", json: #""subscribe""#), (key: "id", json: JSONString.quoted(id)),
            (key: "channel", json: JSONString.quoted(channel)),
        ]
        if let authorization { members.append((key: "authorization", json: JSONString.sortedStringObject(authorization))) }
        return JSONString.object(members)
    }

    static func publish(id: String, channel: String, events: [String], authorization: [String: String]?) -> String {
        var members = [
            (key: "type", json: #""publish""#), (key: "id", json: JSONString.quoted(id)),
            (key: "channel", json: JSONString.quoted(channel)),
            (key: "events", json: JSONString.array(events.map(JSONString.quoted))),
        ]
        if let authorization { members.append((key: "authorization", json: JSONString.sortedStringObject(authorization))) }
        return JSONString.object(members)
    }

    static func unsubscribe(id: String) -> String {
        JSONString.object([(key: "type", json: #""unsubscribe""#), (key: "id", json: JSONString.quoted(id))])
    }
}

/// A raw socket plus the authorizer that signs its messages.
struct RawSession: Sendable {
    let socket: RawWebSocket
    let authorizer: AppSyncAuthorizer

    /// Sends `subscribe` (signed for `channel`) and returns the reply.
    @discardableResult
    func subscribe(_ channel: String, id: String = UUID().uuidString.lowercased()) async throws -> [String: Any] {
        let auth = authorizer.authorization(body: AppSyncFrames.subscribeBody(channel))
        try await socket.send(AppSyncFrames.subscribe(id: id, channel: channel, authorization: auth))
        return try await socket.nextSkippingKeepAlive()
    }

    /// Sends `publish` (signed over its body) and returns the reply.
    @discardableResult
    func publish(_ channel: String, _ events: [String], id: String = UUID().uuidString.lowercased()) async throws -> [String: Any] {
        let auth = authorizer.authorization(body: AppSyncFrames.publishBody(channel, events))
        try await socket.send(AppSyncFrames.publish(id: id, channel: channel, events: events, authorization: auth))
        return try await socket.nextSkippingKeepAlive()
    }

    /// Every message the server sent before it answered a barrier, keep-alives left out unless `keepAlives`. The barrier
    /// is a `subscribe` to
    /// a channel of its own: the server answers its messages in order through the socket's one outbox, after whatever it
    /// had queued for this socket before (a publish that returned has queued its `data`). So what came before the
    /// answer is all there was, without waiting for silence.
    func messagesBeforeBarrier(keepAlives: Bool = false) async throws -> [[String: Any]] {
        let id = "barrier-\(UUID().uuidString.lowercased())"
        let channel = "default/\(id)"
        let auth = authorizer.authorization(body: AppSyncFrames.subscribeBody(channel))
        try await socket.send(AppSyncFrames.subscribe(id: id, channel: channel, authorization: auth))
        var before: [[String: Any]] = []
        while true {
            let message = try await keepAlives ? socket.next() : socket.nextSkippingKeepAlive()
            if message["id"] as? String == id {
                #expect(message["type"] as? String == "subscribe_success", "the barrier: \(message)")
                return before
            }
            before.append(message)
        }
    }

    /// The `data` messages received before a barrier (``messagesBeforeBarrier()``).
    func dataBeforeBarrier() async throws -> [[String: Any]] {
        try await messagesBeforeBarrier().filter { $0["type"] as? String == "data" }
    }

    func close() async { await socket.close() }
}

/// The `errorType` of the first entry of a message's `errors`.
func firstErrorType(_ message: [String: Any]) -> String? {
    ((message["errors"] as? [[String: Any]])?.first)?["errorType"] as? String
}

/// The `message` of the first entry of a message's `errors`.
func firstErrorMessage(_ message: [String: Any]) -> String? {
    ((message["errors"] as? [[String: Any]])?.first)?["message"] as? String
}
