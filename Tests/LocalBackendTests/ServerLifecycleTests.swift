import AppSyncEventsTransport
import Foundation
import LocalBackend
import SubscriberCore
import Testing

/// Starting, stopping, the endpoints and the GraphQL seam.
@Suite("Server lifecycle")
struct ServerLifecycleTests {
    @Test("endpoints name one port; admin is nil without admin")
    func endpoints() async throws {
        try await withBackend { backend in
            let base = "\(backend.host):\(backend.port)"
            #expect(backend.endpoints.http == "http://\(base)/event")
            #expect(backend.endpoints.realtime == "ws://\(base)/event/realtime")
            #expect(backend.endpoints.graphql == "ws://\(base)/graphql")
            #expect(backend.endpoints.admin == "http://\(base)/vortex")
            #expect(backend.port > 0)
        }
        try await withBackend({ $0.admin = false }) { backend in #expect(backend.endpoints.admin == nil) }
    }

    @Test("stop() closes every socket (1001) and returns; the port is released")
    func stopClosesSockets() async throws {
        var configuration = LocalBackendConfiguration()
        configuration.apiKeys = [TestCredentials.apiKey]
        #if os(Linux)
        // The whole 127/8 is loopback on Linux. Every other test's server binds 127.0.0.1, so none of them can take
        // the port this test frees before it checks that the port is closed.
        configuration.host = "127.0.0.2"
        #endif
        let server = LocalBackendServer(configuration: configuration, logger: testLogger)
        let endpoints = try await server.start()
        let backend = Backend(server: server, endpoints: endpoints, endpoint: try AppSyncEndpoint(endpoints.http))
        let session = try await backend.session(.apiKey(TestCredentials.apiKey))
        #expect(server.connections.count() == 1)
        await server.stop()
        #expect(try await session.socket.waitForClose() == 1001)
        #expect(server.connections.count() == 0)
        await #expect(throws: (any Error).self) {
            _ = try await RawHTTP.upgrade(host: backend.host, port: backend.port, path: "/event/realtime")
        }
        await server.stop()
        await #expect(throws: LocalBackendError.stopped) { _ = try await server.start() }
    }

    @Test("GET /graphql upgrades with graphql-transport-ws; unknown paths 404")
    func graphQLSeam() async throws {
        try await withBackend { backend in
            let graphQL = try await RawHTTP.upgrade(
                host: backend.host, port: backend.port, path: "/graphql", subprotocols: ["graphql-transport-ws"])
            #expect(graphQL.status == 101)
            #expect(graphQL.header("Sec-WebSocket-Protocol") == "graphql-transport-ws")
            let unknown = try await RawHTTP.upgrade(host: backend.host, port: backend.port, path: "/nowhere")
            #expect(unknown.status == 404)
        }
    }

    @Test("a bad connection does not disturb others")
    func isolation() async throws {
        try await withBackend { backend in
            let good = try await backend.session(.apiKey(TestCredentials.apiKey))
            #expect(try await good.subscribe("default/x", id: "x")["type"] as? String == "subscribe_success")
            let bad = try await backend.open(.apiKey(TestCredentials.apiKey))
            for frame in ["{", "null", #"{"type":42}"#, String(repeating: "[", count: 10_000)] { try await bad.send(frame) }
            await bad.close()
            await backend.server.bus.publish(channel: "default/x", events: ["1"])
            #expect(try await good.socket.nextSkippingKeepAlive()["event"] as? String == "1")
            await good.close()
        }
    }

    @Test("a JWT secret under 32 bytes is refused at start and by DevelopmentToken")
    func shortSecret() async throws {
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = "short"
        let server = LocalBackendServer(configuration: configuration, logger: testLogger)
        await #expect(throws: LocalBackendError.self) { _ = try await server.start() }
        #expect(throws: DevelopmentToken.Failure.secretTooShort) {
            _ = try DevelopmentToken.make(secret: "short", user: "u", ttl: .seconds(1))
        }
    }

    @Test("UserDirectory.load reads a JSON file and refuses duplicates")
    func directoryFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("directory-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(#"{"users":[{"id":"a","organizationId":"o","role":"admin","deviceGroups":[]}]}"#.utf8).write(to: url)
        #expect(try UserDirectory.load(from: url.path).users.map(\.id) == ["a"])
        try Data(
            #"{"users":[{"id":"a","organizationId":"o","role":"x","deviceGroups":[]},{"id":"a","organizationId":"o","role":"x","deviceGroups":[]}]}"#
                .utf8
        )
        .write(to: url)
        #expect(throws: UserDirectoryError.duplicateUser("a")) { try UserDirectory.load(from: url.path) }
        #expect(throws: UserDirectoryError.self) { try UserDirectory.load(from: url.path + ".missing") }
    }
}
