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
    /// The transport kind in use.
    public private(set) var activeKind: RealtimeConfiguration.TransportKind
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    var failoverTask: ScopedTask?
    /// The stack's background work (the failover watch and its timers); releasing the stack cancels it.
    let scope = TaskScope()
    /// Serialises manual switches, failover and failback: `activeKind` is checked and changed under it.
    let switchGate = OperationGate()

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
        self.activeKind = configuration.transport
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.notifier = BackendNotifier(
            transport: transport, userId: userId, organizationId: organizationId,
            configuration: configuration.notifierConfiguration, filter: filter, clock: clock, wallClock: wallClock,
            logger: logger, metricsFactory: metricsFactory)
    }

    /// Moves the notifier to `kind` (no-op when already there). Observers' streams never end; the switch window is
    /// reported on `BackendNotifier/connectionEvents()`. Manual switches, failover and failback run one at a time.
    public func switchTransport(to kind: RealtimeConfiguration.TransportKind) async throws {
        try await switchTransport(to: kind, because: .requested)
    }

    func switchTransport(to kind: RealtimeConfiguration.TransportKind, because reason: TransportSwitchReason) async throws {
        await switchGate.acquire()
        defer { switchGate.release() }
        guard kind != activeKind else { return }
        let transport = try factory.make(kind)
        try await notifier.switchTransport(to: transport, because: reason)
        activeKind = kind
    }

    /// Starts automatic failover if the configuration enables it (idempotent).
    public func startFailover() {
        guard configuration.failover.enabled, failoverTask == nil else { return }
        failoverTask = scope.spawn { [weak self] in await self?.runFailover() }
    }

    /// Stops failover monitoring and disconnects the active transport.
    public func shutdown() async {
        failoverTask?.cancel()
        failoverTask = nil
        await notifier.activeTransport.disconnect()
    }
}
