import AppSyncEventsTransport
import Foundation
import GraphQLTransport
import LocalBackend
import Logging
import RealtimeTesting
import SubscriberCore
import VortexVocabulary
import WebSocketNIO

/// Runs the scenarios against one in-process local backend at the service's timing, each round through a fresh
/// fault-injecting proxy, with a transport built with the library's defaults (liveness, reconnect policy).
struct LifecycleRunner: Sendable {
    static let secret = "lifecycle-bench-jwt-secret-of-32-bytes-or-more"
    static let user = "u-1"
    /// The backend's `ka` interval, AWS's.
    static let keepAliveSeconds = 60

    let server: LocalBackendServer
    let port: Int
    let endpoints: LocalBackendEndpoints
    let token: String

    /// Starts the backend: `ka` every 60 s, connectionTimeoutMs 300000.
    static func start() async throws -> LifecycleRunner {
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = secret
        configuration.keepAliveInterval = .seconds(keepAliveSeconds)
        configuration.connectionTimeoutMs = 300_000
        var logger = Logger(label: "lifecycle.backend")
        logger.logLevel = .critical
        let server = LocalBackendServer(configuration: configuration, logger: logger)
        let endpoints = try await server.start()
        guard let port = URL(string: endpoints.http)?.port else { throw BenchFailure("no port in \(endpoints.http)") }
        let token = try DevelopmentToken.make(secret: secret, user: user, ttl: .seconds(24 * 3600))
        return LifecycleRunner(server: server, port: port, endpoints: endpoints, token: token)
    }

    func stop() async { await server.stop() }

    /// One round of `scenario` on `kind`.
    func measure(_ scenario: Scenario, on kind: TransportKind) async throws -> LifecycleResult {
        let proxy = try FaultInjectingProxy(upstreamPort: port)
        defer { proxy.stop() }
        let monitor = DrivenNetworkPathMonitor(.satisfied(.wifi))
        let transport = try makeTransport(
            kind, connector: RedirectingConnector(base: NIOWebSocketConnector(), port: proxy.port), monitor: monitor)
        let timeline = Timeline()
        let states = await transport.connectionStates()
        let stream = await transport.subscribe(request(kind))
        let result = try await withThrowingTaskGroup(of: Void.self) { group -> LifecycleResult in
            group.addTask {
                for await state in states { timeline.record(state) }
            }
            group.addTask {
                for try await event in stream { timeline.record(event) }
            }
            // Events keep flowing (10 a second), so a GraphQL subscription confirms on its first `next` after a reconnect.
            group.addTask {
                var sequence = 0
                while !Task.isCancelled {
                    _ = await server.bus.publish(
                        DomainEvent(
                            kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1",
                            payload: ["mac": .string("seq-\(sequence)"), "online": true]))
                    sequence += 1
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { group.cancelAll() }
            try await timeline.wait("the first event", timeout: 20) { $0 > 0 }
            if scenario == .blackholeBeforeKeepAlive {
                // The backend sends a `ka` every interval from the connection's start; the link learns the interval from
                // the second, so the fault comes 31.5 s before the third.
                let opened = proxy.acceptedTimes.last ?? Date()
                let fault = opened.addingTimeInterval(Double(Self.keepAliveSeconds * 3) - 31.5)
                try await Task.sleep(for: .seconds(max(0, fault.timeIntervalSinceNow)))
            }
            let faultAt = Date()
            var origin = faultAt
            var attemptsWhileOffline: Int?
            switch scenario {
            case .blackhole, .blackholeBeforeKeepAlive:
                proxy.blackholeAll()
            case .hardClose:
                proxy.closeAll()
            case .networkReturn:
                let before = proxy.acceptedCount
                monitor.update(.unsatisfied)
                proxy.closeAll()
                try await Task.sleep(for: .seconds(5))
                attemptsWhileOffline = proxy.acceptedCount - before
                origin = Date()
                monitor.update(.satisfied(.wifi))
            case .interfaceSwitch:
                proxy.blackholeAll()
                monitor.update(.satisfied(.cellular))
            case .foreground:
                proxy.blackholeAll()
                try await Task.sleep(for: .seconds(2))
                origin = Date()
                await transport.verifyConnection()
            }
            let resumedAt = try await timeline.waitForResumed(after: faultAt, timeout: 150)
            let lostAt = timeline.firstLoss(after: faultAt)
            let reconnectedAt = proxy.acceptedTimes.first { $0 > origin }
            return LifecycleResult(
                transport: kind, scenario: scenario,
                detected: scenario == .networkReturn ? nil : lostAt.map { $0.timeIntervalSince(origin) },
                reconnected: (reconnectedAt ?? resumedAt).timeIntervalSince(origin), live: resumedAt.timeIntervalSince(origin),
                attemptsWhileOffline: attemptsWhileOffline)
        }
        await transport.disconnect()
        return result
    }

    private func makeTransport(
        _ kind: TransportKind, connector: any WebSocketConnector, monitor: any NetworkPathMonitor
    ) throws
        -> any RealtimeTransport
    {
        var logger = Logger(label: "lifecycle.client")
        logger.logLevel = .warning
        let auth = StaticAuthSession(.bearerToken(token))
        switch kind {
        case .appsync:
            let configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(endpoints.http))
            return AppSyncEventsTransport(
                configuration: configuration, auth: auth, connector: connector, pathMonitor: monitor, logger: logger)
        case .graphql:
            let configuration = try GraphQLTransportConfiguration(endpoints.graphql)
            return GraphQLTransport(configuration: configuration, auth: auth, connector: connector, pathMonitor: monitor, logger: logger)
        }
    }

    private func request(_ kind: TransportKind) -> SubscriptionRequest {
        switch kind {
        case .appsync: .channel("vortex-app/user/\(Self.user)/device/presenceChanged")
        case .graphql: .graphQL(GraphQLOperation(query: "subscription { subscribeDeviceState { mac } }"))
        }
    }
}

/// What happened when, as the benchmark saw it.
final class Timeline: Sendable {
    private struct State {
        var payloads = 0
        var resumed: [Date] = []
        var losses: [Date] = []
    }

    private let state = Locked(State())

    func record(_ state: ConnectionState) {
        switch state {
        case .reconnecting, .connecting: self.state.withLock { $0.losses.append(Date()) }
        default: break
        }
    }

    func record(_ event: SubscriptionEvent) {
        state.withLock { state in
            switch event {
            case .payload: state.payloads += 1
            case .resumed: state.resumed.append(Date())
            case .live, .lost: break
            }
        }
    }

    /// The first time the transport left `connected` after `date` (the link was found dead or was reset).
    func firstLoss(after date: Date) -> Date? { state.withLock { $0.losses.first { $0 > date } } }

    func wait(_ what: String, timeout: Double, _ condition: @escaping @Sendable (Int) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(state.withLock { $0.payloads }) {
            guard Date() < deadline else { throw BenchFailure("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func waitForResumed(after date: Date, timeout: Double) async throws -> Date {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let resumed = state.withLock({ $0.resumed.first { $0 > date } }) { return resumed }
            guard Date() < deadline else { throw BenchFailure("timed out waiting for resumed(gap:)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// Sends every connection to the proxy's port, keeping everything else of the request.
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

/// The benchmark could not measure.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
