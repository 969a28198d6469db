import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// The local development backend: AWS AppSync Events (WebSocket `/event/realtime` and HTTP `POST /event`), the
/// legacy GraphQL endpoint (`/graphql`, see ``GraphQLRoute``), the domain event bus and, with
/// ``LocalBackendConfiguration/admin``, the `/vortex` admin endpoints — one process, one port, behind TLS with
/// ``LocalBackendConfiguration/tls``.
///
/// ```swift
/// var configuration = LocalBackendConfiguration()
/// configuration.jwtSecret = "dev-secret"
/// let server = LocalBackendServer(configuration: configuration)
/// let endpoints = try await server.start()        // returns once listening
/// await server.bus.publish(DomainEvent(kind: .plan, orgId: "o-1", payload: ["isFreePlan": false]))
/// await server.stop()                              // closes every socket, then returns
/// ```
public actor LocalBackendServer {
    /// The longest inbound WebSocket message answered normally (a 5-event publish of 240 KB events fits); longer
    /// messages get an `error` message and the connection goes on.
    public static let maxMessageBytes = 2 * 1024 * 1024

    /// The configuration the server was created with.
    public nonisolated let configuration: LocalBackendConfiguration
    /// The event bus: publish domain events, observe them in-process, read the directory.
    public nonisolated let bus: EventBus
    /// Fault injection (also reachable through `POST /vortex/faults` with ``LocalBackendConfiguration/admin``).
    public nonisolated let faults: FaultInjector
    /// Every open WebSocket of both protocols.
    public nonisolated let connections: ConnectionRegistry

    let hub: ChannelHub
    private let address = ServerAddress()
    private let refusals = UpgradeRefusals()
    private let logger: Logger
    private var state: RunState = .idle

    private enum RunState {
        case idle
        case running(group: ServiceGroup, task: Task<Void, Never>, endpoints: LocalBackendEndpoints?)
        case stopped
    }

    /// Creates a server; nothing listens until ``start()``.
    public init(configuration: LocalBackendConfiguration, logger: Logger = Logger(label: "vortex.local-backend")) {
        self.configuration = configuration
        self.logger = logger
        let connections = ConnectionRegistry()
        let hub = ChannelHub()
        self.connections = connections
        self.hub = hub
        self.faults = FaultInjector(connections: connections)
        self.bus = EventBus(directory: configuration.directory, hub: hub, logger: logger)
    }

    /// Where the server listens, once started.
    public var endpoints: LocalBackendEndpoints? {
        guard case .running(_, _, let endpoints) = state else { return nil }
        return endpoints
    }

    /// Binds and starts serving; returns once the server is listening. Calling it again while running returns the
    /// same endpoints.
    public func start() async throws -> LocalBackendEndpoints {
        switch state {
        case .running(_, _, let endpoints?): return endpoints
        case .running: throw LocalBackendError.alreadyStarting
        case .stopped: throw LocalBackendError.stopped
        case .idle: break
        }
        if let secret = configuration.jwtSecret, secret.utf8.count < DevelopmentToken.minimumSecretBytes {
            throw LocalBackendError.invalidConfiguration(
                "jwtSecret must be at least \(DevelopmentToken.minimumSecretBytes) bytes for HS256 (RFC 7518 §3.2)")
        }
        if let problem = LocalBackendConfiguration.namespaceProblem(configuration.namespaces) {
            throw LocalBackendError.invalidConfiguration(problem)
        }
        let tls = try configuration.tls?.serverConfiguration()
        let services = await makeServices()
        let router = Router(context: BasicRequestContext.self)
        AppSyncHTTPPublishRoute.register(on: router, services: services)
        if configuration.admin { AdminRoutes.register(on: router, services: services) }
        StateRoute.register(on: router, services: services, admin: configuration.admin)
        var webSocketRoutes = WebSocketRouteTable()
        webSocketRoutes.register(AppSyncRealtimeRoute.path) { request, channel, _ in
            await AppSyncRealtimeRoute.decide(request: request, channel: channel, services: services)
        }
        GraphQLRoute.register(on: &webSocketRoutes, services: services)

        let signal = StartupSignal()
        let address = self.address
        let host = configuration.host
        var server = Self.serverBuilder(routes: webSocketRoutes, services: services, refusals: refusals)
        if let tls { server = try .tls(server, tlsConfiguration: tls) }
        let app = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "vortex-local-backend"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                address.set(host: host, port: port)
                signal.succeed(port: port)
            },
            logger: logger
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        let logger = self.logger
        let task = Task {
            do {
                try await group.run()
            } catch {
                logger.error("local backend stopped with an error", metadata: ["error": "\(error)"])
                signal.fail(error)
            }
            signal.fail(LocalBackendError.stopped)
        }
        state = .running(group: group, task: task, endpoints: nil)
        do {
            _ = try await signal.wait()
        } catch {
            state = .stopped
            await task.value
            throw error
        }
        guard case .running = state, let hostAndPort = address.hostAndPort else { throw LocalBackendError.stopped }
        let endpoints = LocalBackendEndpoints(hostAndPort: hostAndPort, admin: configuration.admin, secure: tls != nil)
        state = .running(group: group, task: task, endpoints: endpoints)
        logger.info(
            "local backend listening",
            metadata: ["realtime": "\(endpoints.realtime)", "http": "\(endpoints.http)", "admin": "\(configuration.admin)"])
        return endpoints
    }

    /// Closes every WebSocket (with 1001), stops listening and returns once the server has shut down. Later calls do
    /// nothing.
    public func stop() async {
        guard case .running(let group, let task, _) = state else { return }
        state = .stopped
        let open = connections.closeAll(code: 1001, reason: "server shutting down")
        if open > 0, !(await connections.waitUntilEmpty(timeout: .seconds(5))) {
            logger.warning("some connections did not close in time", metadata: ["open": "\(connections.count())"])
        }
        bus.finish()
        await group.triggerGracefulShutdown()
        await task.value
        logger.info("local backend stopped")
    }

    private func makeServices() async -> BackendServices {
        var jwt: JWTVerifier?
        if let secret = configuration.jwtSecret { jwt = await JWTVerifier.make(secret: secret, faults: faults) }
        let authenticator = AppSyncAuthenticator(
            apiKeys: Set(configuration.apiKeys),
            iam: IAMSignatureVerifier(credentials: configuration.iamCredentials, region: configuration.region),
            jwt: jwt, lambda: configuration.lambdaAuthorizer, address: address)
        return BackendServices(
            configuration: configuration, bus: bus, hub: hub, faults: faults, connections: connections, authenticator: authenticator,
            jwt: jwt, address: address, logger: logger)
    }

    /// HTTP/1 with WebSocket upgrades dispatched by path through `routes`; refusals get their own status and body.
    private static func serverBuilder(
        routes: WebSocketRouteTable, services: BackendServices, refusals: UpgradeRefusals
    )
        -> HTTPServerBuilder
    {
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: HTTP1Channel.Configuration(additionalChannelHandlers: [UpgradeRefusalRewriter(refusals: refusals)]),
            ws: WebSocketServerConfiguration(
                maxFrameSize: 2 * LocalBackendServer.maxMessageBytes, autoPing: .disabled, closeTimeout: .seconds(3)))
        return .http1WebSocketUpgrade(configuration: configuration) { request, channel, logger in
            let refuse = {
                (
                    status: HTTPResponse.Status, error: AppSyncErrorEntry
                ) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> in
                refusals.record(UpgradeRefusals.Refusal(status: status, body: error.httpBody), for: channel)
                return .dontUpgrade
            }
            guard let route = routes.route(for: request.path ?? "/") else {
                return refuse(.notFound, AppSyncErrorEntry(errorType: "NotFound", message: "No WebSocket endpoint at this path"))
            }
            let kind: ConnectionRegistry.Kind = request.path == GraphQLRoute.path ? .graphQL : .appSyncEvents
            if services.faults.isDown(kind) {
                logger.info("upgrade refused with 503 (outage fault)", metadata: ["protocol": "\(kind.rawValue)"])
                return refuse(
                    .serviceUnavailable,
                    AppSyncErrorEntry(errorType: "ServiceUnavailable", message: "\(kind.rawValue) is down (fault injection)"))
            }
            if services.faults.consumeConnectionRefusal() {
                logger.info("upgrade refused with 503 (fault injection)")
                return refuse(
                    .serviceUnavailable,
                    AppSyncErrorEntry(errorType: "ServiceUnavailable", message: "Connection refused by fault injection"))
            }
            switch await route(request, channel, logger) {
            case .upgrade(let headers, let handler):
                return .upgrade(headers, handler)
            case .refuse(let status, let body):
                refusals.record(UpgradeRefusals.Refusal(status: status, body: body), for: channel)
                return .dontUpgrade
            }
        }
    }
}
