import AppSyncEventsTransport
import Foundation
import GraphQLTransport
import LocalBackend
import Logging
import RealtimeTesting
import SubscriberCore
import Testing
import VortexVocabulary
import WebSocketNIO

/// Issue 19 item 2 over real sockets: the local backend at the service's own timing (`ka` every 60 s,
/// `connectionTimeoutMs` 300000), a link blackholed by a TCP proxy, the client with every liveness setting at its
/// default. The dead link is replaced (by the pings, long before `connectionTimeoutMs`), and the gap it reports starts
/// at the link's last frame. The wait is bounded by the test's time limit; no timing is asserted.
@Suite("Liveness over real sockets at the service's timing", .serialized, .timeLimit(.minutes(5)))
struct LivenessIntegrationTests {
    static let secret = "liveness-test-jwt-secret-of-32-bytes-or-more"
    static let user = "u-1"

    @Test("a blackholed link is replaced with default settings; the gap starts at its last frame", arguments: ChaosTests.Transport.allCases)
    func blackholedLinkIsReplaced(kind: ChaosTests.Transport) async throws {
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = Self.secret
        configuration.keepAliveInterval = .seconds(60)
        configuration.connectionTimeoutMs = 300_000
        var logger = Logger(label: "liveness")
        logger.logLevel = .critical
        let server = LocalBackendServer(configuration: configuration, logger: logger)
        let endpoints = try await server.start()
        let proxy = try FaultInjectingProxy(upstreamPort: try #require(URL(string: endpoints.http)?.port))
        defer { proxy.stop() }
        let token = try DevelopmentToken.make(secret: Self.secret, user: Self.user, ttl: .seconds(600))
        let connector = RedirectingConnector(base: NIOWebSocketConnector(), port: proxy.port)
        let auth = StaticAuthSession(.bearerToken(token))
        let transport: any RealtimeTransport
        let request: SubscriptionRequest
        switch kind {
        case .appsync:
            let settings = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(endpoints.http))
            #expect(settings.link.liveness == .default)
            transport = AppSyncEventsTransport(configuration: settings, auth: auth, connector: connector, logger: logger)
            request = .channel("vortex-app/user/\(Self.user)/device/presenceChanged")
        case .graphql:
            let settings = try GraphQLTransportConfiguration(endpoints.graphql)
            #expect(settings.link.liveness == .default)
            transport = GraphQLTransport(configuration: settings, auth: auth, connector: connector, logger: logger)
            request = .graphQL(GraphQLOperation(query: "subscription { subscribeDeviceState { mac } }"))
        }
        let probe = SubscriptionProbe(await transport.subscribe(request))
        @Sendable func publish(_ mac: String) async {
            _ = await server.bus.publish(
                DomainEvent(kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["mac": .string(mac), "online": true]))
        }
        // Live: publish until one event arrives (graphql-transport-ws confirms a subscription with its first event).
        var published = 0
        let publishingFrom = Date()
        while probe.payloadTexts.isEmpty {
            await publish("before-\(published)")
            published += 1
            try await Task.sleep(for: .milliseconds(50))
            if published > 200 { throw TestTimeoutError(what: "the first event") }
        }
        try await Task.sleep(for: .milliseconds(200))  // whatever was in flight has arrived: the link is quiet
        let blackholedAt = Date()
        proxy.blackholeAll()

        // The dead link is found and replaced: a second connection through the proxy, then the stream resumes.
        try await withTestTimeout(120, "the blackholed link to be replaced") {
            while proxy.acceptedCount < 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        let gap = try await withTestTimeout(30, "resumed(gap:)") { () -> GapWindow in
            var after = 0
            while true {
                if let gap = probe.events.lazy.compactMap({ event -> GapWindow? in
                    if case .resumed(let gap) = event { gap } else { nil }
                }).first {
                    return gap
                }
                await publish("after-\(after)")
                after += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let replacedAfter = try #require(proxy.acceptedTimes.last).timeIntervalSince(blackholedAt)
        print(
            "liveness(\(kind.rawValue)): blackholed link replaced \(String(format: "%.1f", replacedAfter)) s after the blackhole; gap \(gap)"
        )
        // The gap starts at the last frame the dead link carried, minus the 2 s margin: not before the events it
        // carried were published, not after the blackhole (and not when the silence was noticed, 30-40 s later).
        #expect(gap.start <= blackholedAt.addingTimeInterval(-2))
        #expect(gap.start >= publishingFrom.addingTimeInterval(-2.1))
        #expect(gap.end > blackholedAt)
        #expect(probe.currentEnding == nil)
        await transport.disconnect()
        await server.stop()
    }
}
