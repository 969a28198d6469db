import BackendNotifier
import CoreMetrics
import Foundation
import Logging
import SubscriberCore

/// The composition root an app holds: reads the configuration, builds one transport and the notifier on it, switches
/// transports at run time (the rollback path) and, if configured, fails over and back automatically.
///
/// ```swift
/// let stack = try RealtimeStack(configuration: .load(file: configPath), auth: authSession,
///                               userId: user.id, organizationId: user.orgId)
/// for await device in await stack.notifier.deviceValues() { … }   // consumer code never names a transport
/// try await stack.switchTransport(to: .graphql)                   // rollback, no consumer change
/// ```
public actor RealtimeStack {
    /// The app-facing notifier; its streams survive every switch.
    public nonisolated let notifier: BackendNotifier
    /// The validated configuration.
    public nonisolated let configuration: RealtimeConfiguration
    /// Builds transports.
    public nonisolated let factory: TransportFactory
    /// The transport kind in use: read from the notifier, the one record of the active transport.
    public var activeKind: RealtimeConfiguration.TransportKind {
        get async { Self.kind(of: await notifier.activeDialect) }
    }
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    var failoverTask: ScopedTask?
    /// Whether the running failover watch is failing back (a new one for each watch started).
    var failbackPhase = FailbackPhase()
    /// The stack's background work (the failover watch, which holds the stack's parts but not the stack); releasing the
    /// stack cancels it.
    let scope = TaskScope()

    /// Builds the stack. Throws ``ConfigurationError`` for an invalid configuration.
    ///
    /// `networkPathMonitor` reports the device's network path to every transport the stack makes: the platform's by
    /// default (`NWPathMonitor` on Apple platforms; none on Linux, where an app may pass a
    /// `DrivenNetworkPathMonitor` it updates itself).
    public init(
        configuration: RealtimeConfiguration,
        auth: any AuthSession,
        userId: String?,
        organizationId: String?,
        connector: any WebSocketConnector = TransportFactory.platformConnector,
        filter: any DeviceEventFilter = AllowAllDeviceEvents(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system,
        logger: Logger = Logger(label: "vortex.realtime"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        networkPathMonitor: (any NetworkPathMonitor)? = TransportFactory.platformPathMonitor()
    ) throws {
        try configuration.validate()
        let factory = TransportFactory(
            configuration: configuration, auth: auth, connector: connector, clock: clock, wallClock: wallClock, logger: logger,
            networkPathMonitor: networkPathMonitor)
        let transport = try factory.make(configuration.transport)
        self.configuration = configuration
        self.factory = factory
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.notifier = BackendNotifier(
            transport: transport, userId: userId, organizationId: organizationId,
            configuration: configuration.notifierConfiguration, filter: filter, clock: clock, wallClock: wallClock,
            logger: logger, metricsFactory: metricsFactory)
    }

    /// Moves the notifier to `kind` (no-op when already there): the one public way to switch transports. Observers'
    /// streams never end. A switch asked for here is make-before-break: the new transport subscribes every stream while
    /// the old one keeps delivering, the cut-over waits until every new subscription is live, and events both
    /// delivered meanwhile are delivered once, so it reports an empty window
    /// (`NotifierConnectionEvent.transportSwitched(from:to:gap:reason:)` with `gap.duration == 0`) when the old
    /// transport was live throughout. Manual switches, failover and failback run one at a time (the notifier
    /// serialises them with its other operations, and decides whether the transport is already `kind` when this
    /// switch's turn comes: a switch asked for while a failover or failback is under way runs after it).
    /// - Throws: ``ConfigurationError`` when `kind` is not configured, or the switch's failure (the new transport did
    ///   not get live within `switchTimeoutSeconds`, or an `update(userId:organizationId:)` to another identity gave
    ///   it up: `disconnected`, `signedOut` for a sign-out); the old transport then stays in use.
    public func switchTransport(to kind: RealtimeConfiguration.TransportKind) async throws {
        // The failover watch follows the transport in use: it was watching (or probing to fail back to) the one the app
        // switched away from, and would never have failed over from this one. A switch to the transport failed over to
        // (a no-op) ends the failback under way: a manual switch is never failed back. A no-op while it merely watches
        // leaves it be (its unhealthy deadline is not postponed).
        if try await failoverRun.requestSwitch(to: kind), failoverTask != nil {
            failoverTask?.cancel()
            failoverTask = nil
            startFailover()
        }
    }

    static func kind(of dialect: TransportDialect) -> RealtimeConfiguration.TransportKind {
        switch dialect {
        case .appSyncChannels: .appsync
        case .graphQL: .graphql
        }
    }

    /// Starts automatic failover if the configuration enables it (idempotent).
    public func startFailover() {
        guard configuration.failover.enabled, failoverTask == nil else { return }
        // The run holds the stack's parts, never the stack: releasing the stack cancels it (its scope closes).
        failbackPhase = FailbackPhase()
        let run = failoverRun
        failoverTask = scope.spawn { await run.run() }
    }

    /// The failover watch over this stack's parts.
    var failoverRun: FailoverRun {
        FailoverRun(
            notifier: notifier, settings: configuration.failover, preferred: configuration.transport, phase: failbackPhase,
            makeTransport: { [factory] kind in try factory.make(kind) }, pathMonitor: factory.networkPathMonitor, clock: clock,
            wallClock: wallClock, logger: logger)
    }

    /// Stops failover monitoring and shuts the notifier down: every upstream stops, the transports are disconnected,
    /// and every observer's stream ends (so `for await` loops over them finish and release what they hold).
    public func shutdown() async {
        failoverTask?.cancel()
        failoverTask = nil
        scope.close()
        await notifier.shutdown()
    }

    deinit {
        // The scope's own release cancels its work as well; this marks the failover task cancelled at once.
        failoverTask?.cancel()
        scope.close()
    }
}
