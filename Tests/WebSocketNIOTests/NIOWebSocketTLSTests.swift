import Foundation
import NIOCore
import NIOSSL
import NIOTestServer
import RealtimeTesting
import SubscriberCore
import Testing
import WebSocketNIO

/// `wss://` on the NIO connector, end to end: the scripted server behind NIOSSL's server handler, with a certificate
/// authority made for each test, so the client's real verification (trust, name, expiry) and TLS's closing run here.
@Suite("NIOWebSocketConnector over TLS")
struct NIOWebSocketTLSTests {
    // MARK: Verification

    @Test("wss:// to a name: the name goes out as SNI, the certificate is verified for it, frames round-trip both ways")
    func roundTripByName() async throws {
        let authority = try TestCertificateAuthority()
        let identity = try authority.issue(dnsNames: ["localhost"])
        try await withServer(.init(tls: TestCertificateAuthority.serverConfiguration(identity))) { server in
            let connector = try Self.connector(trusting: authority)
            let (received, _) = try await scoped(WebSocketRequest(url: server.secureURL(host: "localhost")), with: connector) {
                connection in
                try await connection.send(.text("from the client"))
                try await server.send(text: "from the server")
                return try await connection.receive()
            }
            #expect(received == .text("from the server"))
            #expect(try await server.waitForTexts(1) == ["from the client"])
            // The scope's end: the close goes out through TLS and the server sees the connection end.
            #expect(try await server.waitForClientClose().code == 1000)
            try await server.waitForDisconnect()
            #expect(server.serverNames == ["localhost"])
        }
    }

    @Test("wss:// to an IP address: no SNI goes out, and the certificate's IP address is what is verified")
    func ipLiteral() async throws {
        let authority = try TestCertificateAuthority()
        let identity = try authority.issue(dnsNames: ["localhost"], ipAddresses: [[127, 0, 0, 1]])
        try await withServer(.init(tls: TestCertificateAuthority.serverConfiguration(identity))) { server in
            let connector = try Self.connector(trusting: authority)
            _ = try await scoped(WebSocketRequest(url: server.secureURL(host: "127.0.0.1")), with: connector) { connection in
                try await connection.send(.text("by address"))
            }
            #expect(try await server.waitForTexts(1) == ["by address"])
            #expect(server.serverNames == [nil])
        }
    }

    @Test(
        "a certificate the client must not accept fails the connection before the upgrade, naming why",
        arguments: [Refusal.untrustedRoot, .otherName, .expired, .systemRoots])
    func refusedCertificate(refusal: Refusal) async throws {
        let authority = try TestCertificateAuthority()
        let identity: TestCertificateAuthority.ServerIdentity =
            switch refusal {
            case .otherName: try authority.issue(dnsNames: ["elsewhere.example"])
            case .expired: try authority.issue(dnsNames: ["localhost"], notValidAfter: Date().addingTimeInterval(-60))
            case .untrustedRoot, .systemRoots: try authority.issue(dnsNames: ["localhost"])
            }
        try await withServer(.init(tls: TestCertificateAuthority.serverConfiguration(identity))) { server in
            let connector: NIOWebSocketConnector =
                switch refusal {
                case .untrustedRoot: try Self.connector(trusting: TestCertificateAuthority(commonName: "another root"))
                case .systemRoots: NIOWebSocketConnector(closeTimeout: .seconds(2))
                case .otherName, .expired: try Self.connector(trusting: authority)
                }
            let ran = Locked(false)
            let error = await #expect(throws: WebSocketSeamError.self) {
                _ = try await scoped(WebSocketRequest(url: server.secureURL(host: "localhost")), with: connector) { _ in
                    ran.withLock { $0 = true }
                }
            }
            guard case .connectionFailed(let detail)? = error else {
                Issue.record("expected connectionFailed, got \(String(describing: error))")
                return
            }
            #expect(detail.contains(refusal.reason), "\(detail)")
            #expect(!ran.withLock { $0 })
            #expect(server.upgradeRequests.isEmpty, "nothing may be sent to a server the client could not verify")
        }
    }

    @Test("a TLS configuration that cannot be loaded fails the connection as connectionFailed, naming TLS")
    func unloadableConfiguration() async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file("/nonexistent/vortex-test-roots.pem")
        let connector = NIOWebSocketConnector(tlsConfiguration: tls)
        let request = WebSocketRequest(url: try #require(URL(string: "wss://localhost:1/event/realtime")))
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await withSmokeTimeout(20, "the connection scope") { try await connector.withConnection(request) { _ in } }
        }
        guard case .connectionFailed(let detail)? = error else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
            return
        }
        #expect(detail.hasPrefix("TLS configuration: "), "\(detail)")
    }

    /// Why a certificate is refused, and the words of BoringSSL's error that say so.
    enum Refusal: String, CustomTestStringConvertible, Sendable {
        case untrustedRoot, otherName, expired, systemRoots

        var testDescription: String { rawValue }

        /// BoringSSL says `CERTIFICATE_VERIFY_FAILED` for a chain it cannot trust, expired or not; NIOSSL checks the
        /// name itself.
        var reason: String {
            switch self {
            case .untrustedRoot, .systemRoots, .expired: "CERTIFICATE_VERIFY_FAILED"
            case .otherName: "failedToValidateHostname"
            }
        }
    }

    // MARK: Ending over TLS

    // NIOSSL keeps a closing connection's socket until the peer answers its close_notify or its shutdown timeout
    // passes. These tests give TLS a shutdown timeout of 600 s, far beyond the scope's smoke timeout (20 s): only a
    // socket dropped beneath TLS ends the scope in time.

    @Test("abort() over TLS to a blackholed peer drops the socket at once, without waiting for TLS's closing handshake")
    func abortToBlackholedPeer() async throws {
        let close = try await endLinkToBlackholedPeer(closeTimeout: .seconds(600)) { connection in connection.abort() }
        #expect(close.reason == "aborted" && close.initiatedLocally)
    }

    @Test("a close to a blackholed peer over TLS ends the scope at the close timeout, not at TLS's shutdown timeout")
    func closeToBlackholedPeer() async throws {
        let close = try await endLinkToBlackholedPeer(closeTimeout: .milliseconds(300)) { connection in
            await connection.close(code: 1000, reason: "bye")
        }
        // Nothing came back: the close is this side's, without an answer.
        #expect(close.code == nil && close.initiatedLocally)
    }

    /// Opens a `wss://` link through a proxy, has one message reach the server, blackholes the proxy, ends the link
    /// with `end`, and returns how the scope says it ended; TLS's shutdown timeout is 600 s.
    private func endLinkToBlackholedPeer(
        closeTimeout: Duration, _ end: @escaping @Sendable (any WebSocketConnection) async -> Void
    ) async throws -> WebSocketCloseInfo {
        let authority = try TestCertificateAuthority()
        let identity = try authority.issue(dnsNames: ["localhost"])
        var close: WebSocketCloseInfo?
        try await withServer(.init(answersClose: false, tls: TestCertificateAuthority.serverConfiguration(identity))) { server in
            let proxy = try FaultInjectingProxy(upstreamPort: server.port)
            defer { proxy.stop() }
            let connector = try Self.connector(trusting: authority, closeTimeout: closeTimeout, tlsShutdownTimeout: .seconds(600))
            close = try await scoped(WebSocketRequest(url: server.secureURL(port: proxy.port)), with: connector) { connection in
                try await connection.send(.text("before"))
                _ = try await server.waitForTexts(1)
                proxy.blackholeAll()
                await end(connection)
            }.1
        }
        return try #require(close)
    }

    // MARK: Helpers

    /// A connector whose TLS trusts `authority` only.
    private static func connector(
        trusting authority: TestCertificateAuthority, closeTimeout: Duration = .seconds(2), tlsShutdownTimeout: TimeAmount? = nil
    ) throws -> NIOWebSocketConnector {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = try authority.trustRoots
        if let tlsShutdownTimeout { tls.shutdownTimeout = tlsShutdownTimeout }
        return NIOWebSocketConnector(closeTimeout: closeTimeout, tlsConfiguration: tls)
    }

    /// Runs `body` in a connection scope, failing instead of hanging.
    private func scoped<Value: Sendable>(
        _ request: WebSocketRequest, with connector: NIOWebSocketConnector,
        _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> (Value, WebSocketCloseInfo) {
        let result = try await withSmokeTimeout(20, "the connection scope") { try await connector.withConnection(request, body) }
        return (result.value, result.close)
    }
}
