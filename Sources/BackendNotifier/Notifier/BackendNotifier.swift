import CoreMetrics
import Foundation
import Logging
import SubscriberCore

/// The app-facing notifier: typed streams of the Vortex backend events, on whichever transport is configured.
///
/// Two APIs over the same upstream subscriptions, and both work on both transports:
/// - the merged legacy API: ``deviceValues()``, ``archiveValues()``, ``organizationValues()``, ``roleValues()``,
///   ``revokeValues()``;
/// - the nine-method API: ``devicePresenceValues()``, ``deviceRecordingValues()``, ``deviceFirmwareValues()``,
///   ``archiveValues()``, ``licenseValues()``, ``planValues()``, ``aiSettingsValues()``, ``roleValues()``,
///   ``revokeValues()``.
///
/// Observers' streams never end on their own: not on reconnects, identity changes, background/foreground or a
/// transport switch; only when the notifier is shut down (`RealtimeStack.shutdown()`) or released. What they may have
/// missed is reported on ``connectionEvents()``. Many observers of one method share one upstream subscription, which
/// ends when the last observer cancels.
///
/// The actor is the I/O shell of a pure state machine (`NotifierStateMachine`): every public call, every upstream's
/// confirmation and end, the active transport's states, timers and finished disconnects go in as events; what comes
/// out (start or stop an upstream, disconnect a transport, emit an event, publish a state, arm a timer, return from an
/// operation) is performed here.
public actor BackendNotifier {
    /// A running upstream: its pump's task and where its events go.
    struct Pump {
        let task: ScopedTask
        let delivery: UpstreamDelivery
    }

    /// The caller of an operation (an identity update, a switch, a resumption), waiting for it to take effect.
    enum Waiter {
        case plain(CheckedContinuation<Void, Never>)
        case throwing(CheckedContinuation<Void, any Error>)
    }

    let configuration: NotifierConfiguration
    let hubs: NotifierHubs
    let router: EventRouter
    let events: StreamHub<NotifierConnectionEvent>
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let metrics: NotifierMetrics
    /// The active transport's name, readable from the delivery path without hopping onto the actor.
    let activeName: Locked<String>
    let states = StateBroadcaster<NotifierConnectionState>(.offline, keepingNewest: 16)
    /// Every background task of the notifier (upstream pumps, the state follower, timers, disconnects) runs in this
    /// scope; releasing the notifier cancels them all.
    let scope = TaskScope()

    /// Every decision: what runs, which transport is active, which operation runs and which wait.
    var machine: NotifierStateMachine
    /// The transports the machine refers to: the active one and, during a switch, the new one.
    var transports: [Int: any RealtimeTransport]
    var nextTransportID = 1
    var nextOperationID = 0
    var pumps: [NotifierStateMachine.RunID: Pump] = [:]
    /// Each switch's overlap, per upstream, until the machine ends it.
    var overlaps: [Int: [Upstream: SwitchOverlap]] = [:]
    var timers: [NotifierStateMachine.Timer: ScopedTask] = [:]
    var stateFollower: ScopedTask?
    var waiters: [Int: Waiter] = [:]

    /// Creates a notifier on `transport` for a signed-in user (`userId` `nil` means signed out: no connection).
    /// - Parameters:
    ///   - transport: the transport to start on (`RealtimeStack.switchTransport(to:)` changes it later).
    ///   - userId: the signed-in user, or `nil` when signed out.
    ///   - organizationId: the user's organization.
    ///   - configuration: buffers, background grace, switch timeout, network-error limit, channel namespace, GraphQL
    ///     operations.
    ///   - filter: client-side device-group filter (pass-through by default).
    ///   - clock: runs the background grace delay, the switch timeout and the network-error limit.
    ///   - wallClock: timestamps gap and loss windows and latency.
    ///   - logger: never receives credentials.
    ///   - metricsFactory: where metrics go (default: the process's bootstrapped `MetricsSystem`).
    public init(
        transport: any RealtimeTransport,
        userId: String? = nil,
        organizationId: String? = nil,
        configuration: NotifierConfiguration = NotifierConfiguration(),
        filter: any DeviceEventFilter = AllowAllDeviceEvents(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system,
        logger: Logger = Logger(label: "vortex.notifier"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        let metrics = NotifierMetrics(factory: metricsFactory)
        let events = StreamHub<NotifierConnectionEvent>(name: "connectionEvents", policy: ObserverBufferPolicy(limit: 256)) { _, _ in }
        let activeName = Locked(transport.name)
        let hubs = NotifierHubs(policy: configuration.bufferPolicy, metrics: metrics) { stream, count in
            metrics.bufferDrop(stream: stream, count: count)
            logger.warning("observer buffer full; dropped values", metadata: ["stream": "\(stream)", "count": "\(count)"])
            let now = wallClock.now()
            let loss = LossReport(
                count: count, window: GapWindow(start: now.addingTimeInterval(-EventRouter.lossMargin), end: now), reason: .bufferOverflow)
            events.yield(.eventsLost(stream: stream, transport: activeName.withLock { $0 }, loss: loss))
        }
        self.configuration = configuration
        self.hubs = hubs
        self.router = EventRouter(hubs: hubs, filter: filter, metrics: metrics, logger: logger, wallClock: wallClock) { stream, loss in
            events.yield(.eventsLost(stream: stream, transport: activeName.withLock { $0 }, loss: loss))
        }
        self.events = events
        self.activeName = activeName
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.metrics = metrics
        self.transports = [0: transport]
        self.machine = NotifierStateMachine(
            settings: NotifierStateMachine.Settings(configuration),
            identity: NotifierStateMachine.Identity(userId: userId, organizationId: organizationId),
            active: NotifierStateMachine.TransportRef(id: 0, name: transport.name, dialect: transport.dialect))
    }

    deinit {
        // Released: every task stops, and every observer's stream ends (a consumer waiting on it would otherwise
        // wait, and hold its buffer, for ever).
        scope.close()
        hubs.finishAll()
        events.finish()
        states.finish()
    }

    // MARK: The merged legacy API

    /// Device presence, recording and firmware changes, merged (legacy `subscribeDeviceState`).
    public func deviceValues() -> AsyncStream<DeviceStateOutput> { observe(hubs.deviceMerged, .device) }
    /// Archive state changes (shared by both APIs).
    public func archiveValues() -> AsyncStream<ArchiveStateOutput> { observe(hubs.archive, .archive) }
    /// Licence phase, plan and AI settings changes, merged (legacy `subscribeOrganizationState`).
    public func organizationValues() -> AsyncStream<OrganizationStateOutput> { observe(hubs.organizationMerged, .organization) }
    /// Role changes of the signed-in user (shared by both APIs).
    public func roleValues() -> AsyncStream<RoleChangeOutput> { observe(hubs.role, .role) }
    /// Token revocations of the signed-in user (shared by both APIs).
    public func revokeValues() -> AsyncStream<UserTokenRevokeOutput> { observe(hubs.revoke, .revoke) }

    // MARK: The nine-method API

    /// `device/presenceChanged`.
    public func devicePresenceValues() -> AsyncStream<DevicePresenceOutput> { observe(hubs.presence, .device) }
    /// `device/recordingStateChanged`.
    public func deviceRecordingValues() -> AsyncStream<DeviceRecordingOutput> { observe(hubs.recording, .device) }
    /// `device/firmwareUpdated`.
    public func deviceFirmwareValues() -> AsyncStream<DeviceFirmwareOutput> { observe(hubs.firmware, .device) }
    /// `organization/licensePhaseChanged`.
    public func licenseValues() -> AsyncStream<LicenseStateOutput> { observe(hubs.license, .organization) }
    /// `organization/planChanged`.
    public func planValues() -> AsyncStream<PlanStateOutput> { observe(hubs.plan, .organization) }
    /// `organization/aiSettingsChanged`.
    public func aiSettingsValues() -> AsyncStream<AISettingsOutput> { observe(hubs.aiSettings, .organization) }

    // MARK: Connection events and state

    /// Live, resumed (with the gap window), switched, session expired, signed out, network error, stream failed,
    /// events lost (with stream, count and window), suspended.
    public func connectionEvents() -> AsyncStream<NotifierConnectionEvent> {
        events.makeStream(onLastObserverGone: {})
    }

    /// The connection as an app shows it: connecting, live, reconnecting, offline or suspended. Starts with the
    /// current state and follows whichever transport is active.
    public func connectionStates() -> AsyncStream<NotifierConnectionState> {
        states.makeStream()
    }

    /// The current connection state (see ``connectionStates()``).
    public var connectionState: NotifierConnectionState { states.current }

    /// The name of the transport in use (`"appsync"` or `"graphql"`).
    public var activeTransportName: String { machine.active.name }

    /// The transport in use.
    package var activeTransport: any RealtimeTransport { transports[machine.active.id]! }

    /// The dialect of the transport in use: the one record of which transport is active (`RealtimeStack` reads it).
    package var activeDialect: TransportDialect { machine.active.dialect }

    /// Delivered, dropped and undecodable counts.
    public func statistics() -> NotifierStatistics {
        NotifierStatistics(
            streams: hubs.counts.mapValues { NotifierStatistics.StreamStatistics(delivered: $0.delivered, dropped: $0.dropped) },
            decodeFailures: router.decodeFailures,
            transport: machine.active.name)
    }

    /// Whether the upstream subscriptions are running (signed in, in the foreground, something observed).
    public var isConnectedUpstream: Bool { machine.isConnectedUpstream }

    /// How many identity updates, switches, suspensions or resumptions wait for the one running (for tests).
    var waitingOperations: Int { machine.waitingOperations }

    // MARK: Observers

    private func observe<T: Sendable>(_ hub: StreamHub<T>, _ upstream: Upstream) -> AsyncStream<T> {
        let stream = hub.makeStream { [weak self] in
            // The last observer went (on the consumer's thread): whether the upstream is still wanted is decided on
            // the actor, where a new observer may have arrived meanwhile.
            self?.scope.spawn { [weak self] in await self?.releaseIfUnused(upstream) }
        }
        receive(.observed(upstream))
        return stream
    }

    private func releaseIfUnused(_ upstream: Upstream) {
        guard !hubs.isDemanded(upstream) else { return }
        receive(.unobserved(upstream))
    }

    // MARK: The state machine

    /// Feeds `event` to the state machine and performs what it says.
    func receive(_ event: NotifierStateMachine.Event) {
        perform(machine.handle(event, now: wallClock.now()))
    }

    /// A new operation id, for an operation whose caller waits.
    func newOperation() -> Int {
        nextOperationID += 1
        return nextOperationID
    }
}
