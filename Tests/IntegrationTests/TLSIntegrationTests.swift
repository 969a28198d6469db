import BackendNotifier
import Composition
import Foundation
import LocalBackend
import NIOSSL
import NIOTestServer
import RealtimeDrill
import RealtimeTesting
import SubscriberCore
import Testing
import WebSocketNIO

/// The whole stack over TLS, as an app meets AWS (every AppSync endpoint is `wss://`): the local backend behind a
/// certificate from an authority made for the test, the NIO connector verifying it, on each protocol.
@Suite("The whole stack over TLS against the local backend", .serialized, .timeLimit(.minutes(2)))
struct TLSIntegrationTests {
    @Test(
        "wss:// on each protocol: the notifier verifies the local backend's certificate, goes live and receives an event",
        arguments: [RealtimeConfiguration.TransportKind.appsync, .graphql])
    func eventOverTLS(kind: RealtimeConfiguration.TransportKind) async throws {
        let authority = try TestCertificateAuthority()
        try await withSecureBackend(authority) { server, endpoints, token in
            #expect(endpoints.http.hasPrefix("https://"))
            #expect(endpoints.realtime.hasPrefix("wss://"))
            #expect(endpoints.graphql.hasPrefix("wss://"))
            let stack = try Self.stack(kind, endpoints, token, trusting: authority)
            let events = ValueRecorder(await stack.notifier.connectionEvents())
            let presence = ValueRecorder(await stack.notifier.devicePresenceValues())
            try await events.waitUntil(timeout: 15) { received in
                received.contains { if case .live("device", _) = $0 { true } else { false } }
            }
            let stamp = ISO8601Timestamp.string(from: Date(), fractionalSeconds: true)
            try await presence.waitUntil(
                timeout: 15, poll: { _ = await server.bus.publish(DrillScript.event(1, kind: .devicePresence, timestamp: stamp)) }
            ) { !$0.isEmpty }
            #expect(presence.recorded.first?.thingName == "thing-7")
            #expect(presence.recorded.first?.online == true)
            await stack.shutdown()
        }
    }

    @Test(
        "a client that does not trust the certificate never goes live, opens no WebSocket and reports a network error that says why",
        arguments: [RealtimeConfiguration.TransportKind.appsync, .graphql])
    func untrustedCertificate(kind: RealtimeConfiguration.TransportKind) async throws {
        let authority = try TestCertificateAuthority()
        try await withSecureBackend(authority) { server, endpoints, token in
            // The limit leaves the first attempt (a TLS handshake, slow under a sanitizer) time to fail, so the one report
            // of the outage can name its failure.
            let stack = try Self.stack(
                kind, endpoints, token, trusting: TestCertificateAuthority(commonName: "another root"),
                networkErrorAfter: TestTime.scaled(3))
            let events = ValueRecorder(await stack.notifier.connectionEvents())
            let presence = ValueRecorder(await stack.notifier.devicePresenceValues())
            do {
                try await events.waitUntil(timeout: 15) { received in
                    received.contains { if case .networkError = $0 { true } else { false } }
                }
            } catch {
                Issue.record(
                    "no network error; the notifier reported \(events.recorded), its state is \(await stack.notifier.connectionState)")
                throw error
            }
            // The event's detail says why: the transport's last failure, the certificate the client could not verify.
            let details = events.recorded.compactMap { if case .networkError(let detail) = $0 { detail } else { nil } }
            #expect(details.first?.contains("last attempt: open failed") == true, "\(details)")
            #expect(details.first?.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(details)")
            #expect(!events.recorded.contains { if case .live = $0 { true } else { false } })
            #expect(presence.recorded.isEmpty)
            #expect(server.connections.count() == 0, "no WebSocket may open to a server the client could not verify")
            await stack.shutdown()
        }
    }

    @Test(
        "serve --tls-certificate --tls-key: the endpoints line names https:// and wss://, and a client trusting the certificate goes live")
    func serveCommandOverTLS() async throws {
        let binary = try #require(CommandLineTests.executable, "vortex-realtime is not built: run scripts/test.sh")
        let authority = try TestCertificateAuthority()
        let identity = try authority.issue(dnsNames: ["localhost"], ipAddresses: [[127, 0, 0, 1]])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("chain.pem")
        let key = directory.appendingPathComponent("key.pem")
        try Data(identity.certificateChainPEM.utf8).write(to: certificate)
        try Data(identity.privateKeyPEM.utf8).write(to: key)
        let secret = (0..<4).map { _ in UUID().uuidString }.joined()

        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--jwt-secret", secret, "--tls-certificate", certificate.path, "--tls-key", key.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let reader = output.fileHandleForReading
        let line = try await withTestTimeout(30, "the endpoints line") {
            try await onOwnThread { () -> Data in
                var line = Data()
                while !line.contains(UInt8(ascii: "\n")) {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    line.append(chunk)
                }
                return line
            }
        }
        let endpoints = try JSONDecoder().decode(LocalBackendEndpoints.self, from: line)
        #expect(endpoints.http.hasPrefix("https://127.0.0.1:"))
        #expect(endpoints.realtime.hasPrefix("wss://127.0.0.1:"))
        #expect(endpoints.graphql.hasPrefix("wss://127.0.0.1:"))

        let token = try DevelopmentToken.make(secret: secret, user: DrillScript.user, ttl: .seconds(600))
        let stack = try Self.stack(.appsync, endpoints, token, trusting: authority)
        let events = ValueRecorder(await stack.notifier.connectionEvents())
        let presence = ValueRecorder(await stack.notifier.devicePresenceValues())
        try await events.waitUntil(timeout: 15) { received in
            received.contains { if case .live("device", _) = $0 { true } else { false } }
        }
        withExtendedLifetime(presence) {}  // observed until live: an unobserved stream has no upstream
        await stack.shutdown()
        process.terminate()
        try await onOwnThread { process.waitUntilExit() }
        #expect(process.terminationStatus == 0, "serve should end cleanly on SIGTERM")
    }

    @Test("a certificate chain or key that cannot be used is refused at start, naming which, never quoting the key")
    func unusableCertificateOrKey() async throws {
        let authority = try TestCertificateAuthority()
        let identity = try authority.issue(dnsNames: ["localhost"])
        let other = try authority.issue(dnsNames: ["localhost"])
        let secretLine = "not a key, but secret"
        let cases: [(LocalBackendTLS, String)] = [
            (LocalBackendTLS(certificateChainPEM: "garbage", privateKeyPEM: identity.privateKeyPEM), "certificate chain"),
            (LocalBackendTLS(certificateChainPEM: "", privateKeyPEM: identity.privateKeyPEM), "certificate chain"),
            (LocalBackendTLS(certificateChainPEM: identity.certificateChainPEM, privateKeyPEM: secretLine), "private key"),
            // Both valid, but the key is another certificate's: Hummingbird would only find out once serving.
            (
                LocalBackendTLS(certificateChainPEM: identity.certificateChainPEM, privateKeyPEM: other.privateKeyPEM),
                "cannot be used together"
            ),
        ]
        for (tls, what) in cases {
            var configuration = LocalBackendConfiguration()
            configuration.tls = tls
            let server = LocalBackendServer(configuration: configuration)
            let error = await #expect(throws: LocalBackendError.self) { _ = try await server.start() }
            guard case .invalidConfiguration(let detail)? = error else {
                Issue.record("expected invalidConfiguration, got \(String(describing: error))")
                continue
            }
            #expect(detail.contains(what), "\(detail)")
            #expect(!detail.contains(secretLine))
            #expect(await server.endpoints == nil)
        }
    }

    // MARK: Helpers

    /// A local backend serving `https://` and `wss://` with a certificate `authority` issued for `localhost` and
    /// 127.0.0.1, and a token for the drill's user.
    private func withSecureBackend(
        _ authority: TestCertificateAuthority, _ body: (LocalBackendServer, LocalBackendEndpoints, String) async throws -> Void
    ) async throws {
        let identity = try authority.issue(dnsNames: ["localhost"], ipAddresses: [[127, 0, 0, 1]])
        let secret = (0..<4).map { _ in UUID().uuidString }.joined()
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = secret
        configuration.tls = LocalBackendTLS(certificateChainPEM: identity.certificateChainPEM, privateKeyPEM: identity.privateKeyPEM)
        let server = LocalBackendServer(configuration: configuration)
        let endpoints = try await server.start()
        do {
            try await body(server, endpoints, try DevelopmentToken.make(secret: secret, user: DrillScript.user, ttl: .seconds(600)))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// A stack on `kind` whose NIO connector trusts `authority` only; it reports a network error after `networkErrorAfter`
    /// seconds offline.
    private static func stack(
        _ kind: RealtimeConfiguration.TransportKind, _ endpoints: LocalBackendEndpoints, _ token: String,
        trusting authority: TestCertificateAuthority, networkErrorAfter: Double = 1
    ) throws -> RealtimeStack {
        var configuration = RealtimeConfiguration()
        configuration.transport = kind
        configuration.appSyncEndpoint = endpoints.http
        configuration.graphQLEndpoint = endpoints.graphql
        configuration.reconnect = "fixed:0.2"
        configuration.networkErrorAfterSeconds = networkErrorAfter
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = try authority.trustRoots
        return try RealtimeStack(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(token)), userId: DrillScript.user,
            organizationId: DrillScript.organization, connector: NIOWebSocketConnector(tlsConfiguration: tls))
    }
}
