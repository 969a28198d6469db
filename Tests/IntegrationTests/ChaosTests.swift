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

/// Issue 9 from outside: both transports through a proxy that hard-closes or silently blackholes every link at seeded
/// random moments, while seq-numbered events are published at 100/s. Nothing may be duplicated or reordered, and every
/// event that did not arrive must lie inside a window the client reported (`resumed(gap:)` or `lost(_:)`).
///
/// `VORTEX_CHAOS_SEED` reproduces a run; `VORTEX_CHAOS_SECONDS` lengthens it (default 8 s of faults per transport).
@Suite("Chaos: hard closes and silent blackholes through a proxy", .serialized, .timeLimit(.minutes(3)))
struct ChaosTests {
    enum Transport: String, CaseIterable, Sendable {
        case appsync, graphql
    }

    static let secret = "chaos-test-jwt-secret-of-32-bytes-or-more"
    static let user = "u-1"

    @Test("every loss inside a reported window; no duplicates; no reordering", arguments: Transport.allCases)
    func chaos(transport kind: Transport) async throws {
        let seed = ChaosRig.seed(for: "chaos(\(kind.rawValue))")
        let faultSeconds = ProcessInfo.processInfo.environment["VORTEX_CHAOS_SECONDS"].flatMap(Double.init) ?? 8
        let rig = try await ChaosRig.start(secret: Self.secret, label: "chaos")
        let (server, endpoints, proxy, logger) = (rig.server, rig.endpoints, rig.proxy, rig.logger)
        defer { proxy.stop() }
        let token = try DevelopmentToken.make(secret: Self.secret, user: Self.user, ttl: .seconds(600))
        let connector = RedirectingConnector(base: NIOWebSocketConnector(), port: proxy.port)
        let transport = try Self.makeTransport(kind, endpoints: endpoints, token: token, connector: connector, logger: logger)
        let request: SubscriptionRequest =
            switch kind {
            case .appsync: .channel("vortex-app/user/\(Self.user)/device/presenceChanged")
            case .graphql: .graphQL(GraphQLOperation(query: "subscription { subscribeDeviceState { mac } }"))
            }
        let probe = SubscriptionProbe(await transport.subscribe(request))
        // The subscription is live before anything is published (GraphQL confirms on the first event, so publish
        // until one arrives and count from the next sequence number).
        var sequence = 0
        let published = Locked<[(sequence: Int, at: Date)]>([])
        func publish() async {
            let at = Date()
            published.withLock { $0.append((sequence, at)) }
            _ = await server.bus.publish(
                DomainEvent(
                    kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1", payload: ["mac": .string("seq-\(sequence)"), "online": true])
            )
            sequence += 1
        }
        let clock = ContinuousClock()
        let start = clock.now
        while Self.sequences(probe).isEmpty {
            guard clock.now - start < .seconds(15) else { throw TestTimeoutError(what: "the first event") }
            await publish()
            try await Task.sleep(for: .milliseconds(50))
        }
        published.withLock { $0.removeAll() }
        let firstCounted = sequence

        // Faults at seeded moments while publishing at 100/s, then a clean tail so every gap closes.
        var schedule = FaultSchedule(seed: seed, from: clock.now, lasting: faultSeconds, spacing: 500...2000)
        let end = schedule.faultsEnd + .seconds(4)
        while clock.now < end {
            await publish()
            schedule.step(clock.now, proxy)
            try await Task.sleep(for: .milliseconds(10))
        }
        let faults = schedule.faults
        // The tail has healed when the latest event published arrives. Under load a link can still be replaced in the
        // tail (a pong later than the test's 500 ms timeout), losing the events of its reported window: then another
        // is published each second, so the check waits for delivery, not for one event that was legitimately lost.
        var last = sequence - 1
        let settle = clock.now
        var lastPublished = settle
        while (Self.sequences(probe).last ?? -1) < last, clock.now - settle < .seconds(10) {
            if clock.now - lastPublished >= .seconds(1) {
                await publish()
                last = sequence - 1
                lastPublished = clock.now
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let endedEarly = probe.currentEnding
        await transport.disconnect()
        await server.stop()

        let received = Self.sequences(probe).filter { $0 >= firstCounted }
        let windows = probe.events.compactMap { event -> GapWindow? in
            switch event {
            case .resumed(let gap): gap
            case .lost(let loss): loss.window
            case .live, .payload: nil
            }
        }
        // How fast a silent link was replaced: from each blackhole's start to the next connection the proxy accepted.
        let accepts = proxy.acceptedTimes
        let detections = faults.filter { $0.1 == "blackhole" }.compactMap { fault in
            accepts.first { $0 > fault.0 }.map { $0.timeIntervalSince(fault.0) }
        }
        let receivedSet = Set(received)
        let lost = published.withLock { $0 }.filter { !receivedSet.contains($0.sequence) }
        let outside = lost.filter { event in !windows.contains { $0.start <= event.at && event.at <= $0.end } }
        print(
            "chaos(\(kind.rawValue)): seed \(seed), \(faults.count) faults, \(published.withLock { $0.count }) published, "
                + "\(received.count) received, \(lost.count) lost, \(outside.count) outside every reported window, "
                + "\(windows.count) windows, \(proxy.acceptedCount) connections, silent links replaced after "
                + detections.map { String(format: "%.2f s", $0) }.joined(separator: ", "))
        #expect(received.count == receivedSet.count, "duplicates (seed \(seed))")
        #expect(received == received.sorted(), "reordered (seed \(seed))")
        #expect(outside.isEmpty, "lost outside every reported window (seed \(seed)): \(outside.prefix(10).map(\.sequence))")
        #expect(received.last == last, "the clean tail arrived (seed \(seed))")
        #expect(!faults.isEmpty)
        #expect(endedEarly == nil, "the stream never ended before disconnect (seed \(seed))")
    }

    static func makeTransport(
        _ kind: Transport, endpoints: LocalBackendEndpoints, token: String, connector: any WebSocketConnector, logger: Logger
    ) throws -> any RealtimeTransport {
        switch kind {
        case .appsync:
            var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(endpoints.http))
            configuration.link.reconnectPolicy = .fixed(.milliseconds(100))
            configuration.link.ackTimeout = .seconds(2)
            configuration.link.subscriptionBufferLimit = 100_000
            return AppSyncEventsTransport(
                configuration: configuration, auth: StaticAuthSession(.bearerToken(token)), connector: connector, logger: logger)
        case .graphql:
            var configuration = try GraphQLTransportConfiguration(endpoints.graphql)
            configuration.link.reconnectPolicy = .fixed(.milliseconds(100))
            configuration.link.ackTimeout = .seconds(2)
            configuration.link.liveness = LivenessSettings(quietPeriod: .milliseconds(500), pongTimeout: .milliseconds(500))
            configuration.link.subscriptionBufferLimit = 100_000
            return GraphQLTransport(
                configuration: configuration, auth: StaticAuthSession(.bearerToken(token)), connector: connector, logger: logger)
        }
    }

    /// The sequence numbers received, in arrival order.
    static func sequences(_ probe: SubscriptionProbe) -> [Int] {
        probe.payloadTexts.compactMap { text in
            guard let range = text.range(of: #"seq-(\d+)"#, options: .regularExpression) else { return nil }
            return Int(text[range].dropFirst(4))
        }
    }
}

/// Sends every connection to another port on the same host (the proxy), keeping everything else of the request.
struct RedirectingConnector: WebSocketConnector {
    let base: any WebSocketConnector
    let port: Int

    func withConnection<Value: Sendable>(
        _ request: WebSocketRequest, _ body: @escaping @Sendable (any WebSocketConnection) async throws -> Value
    ) async throws -> WebSocketScopeResult<Value> {
        var redirected = request
        var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        components?.port = port
        redirected.url = components?.url ?? request.url
        return try await base.withConnection(redirected, body)
    }
}
