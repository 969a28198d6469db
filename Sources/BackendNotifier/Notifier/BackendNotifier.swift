import CoreMetrics
import Foundation
import Logging
import SubscriberCore

/// The app-facing notifier: typed streams of the Vortex backend events, on whichever transport is configured.
///
/// Two APIs over the same upstream subscriptions, both on both transports: the merged legacy API and the nine-method
/// API (see the catalog's articles). Observers' streams never end on their own: not on reconnects, identity changes, background/foreground or a
/// transport switch; only when the notifier is shut down (`RealtimeStack.shutdown()`) or released. What they may have
/// missed is reported on ``connectionEvents()``. Many observers of one method share one upstream subscription, which
/// ends when the last observer cancels.
///
/// The actor is the I/O shell of a pure state machine (`NotifierStateMachine`): every public call, every upstream's
/// confirmation and end, the active transport's states, timers and finished disconnects go in as events; what comes
/// out (start or stop an upstream, disconnect a transport, emit an event, publish a state, arm a timer, return from an
/// operation) is performed here.
public actor BackendNotifier {
    let configuration: NotifierConfiguration
    let hubs: NotifierHubs
    let router: EventRouter
    let events: StreamHub<NotifierConnectionEvent>
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let metrics: NotifierMetrics
    let losses: LossReporter
    let states = StateBroadcaster<NotifierConnectionState>(.offline, keepingNewest: 16)
    /// Every background task of the notifier (upstream pumps, the state follower, timers, disconnects) runs in this
    /// scope; releasing the notifier cancels them all.
    let scope = TaskScope()

    /// Every decision: what runs, which transport is active, which operation runs and which wait.
    var machine: NotifierStateMachine
    var transports: TransportTable
    var runs = UpstreamRuns()
    /// The armed timers and the state follower, each replaced when the machine arms or follows again.
    var chores: [Chore: ScopedTask] = [:]
    var waiters = OperationWaiters()
    /// The identity of the newest ``update(userId:organizationId:)`` (the one made with before any), set as the call
    /// starts, before the state machine takes it: ``isSignedIn`` and ``identityChanges()``.
    let identities: StateBroadcaster<NotifierIdentity>
    /// Whether the state machine lets upstreams run (signed in, the session holding, not suspended, not shut down),
    /// after each event it took: ``runsUpstreams`` and ``runsUpstreamsChanges()``.
    let upstreamsAllowed: StateBroadcaster<Bool>

    /// A background task the machine replaces or cancels by name.
    enum Chore: Hashable {
        case timer(NotifierStateMachine.Timer)
        case stateFollower
    }

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
        let events = StreamHub<NotifierConnectionEvent>(
            name: "connectionEvents", policy: ObserverBufferPolicy(limit: 256), overflowRule: NotifierConnectionEvent.overflowRule
        ) { _, _ in }
        let losses = LossReporter(
            events: events, activeName: Locked(transport.name), wallClock: wallClock, lossMargin: configuration.validLossMargin.timeInterval
        )
        let hubs = NotifierHubs(
            policy: configuration.bufferPolicy, metrics: metrics, onDrop: losses.bufferOverflow(metrics: metrics, logger: logger))
        self.configuration = configuration
        self.hubs = hubs
        self.router = EventRouter(hubs: hubs, filter: filter, metrics: metrics, logger: logger, wallClock: wallClock, losses: losses)
        self.events = events
        self.losses = losses
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.metrics = metrics
        self.transports = TransportTable(transport)
        let identity = NotifierIdentity(userId: userId, organizationId: organizationId)
        self.identities = StateBroadcaster(identity, keepingNewest: 1)
        self.upstreamsAllowed = StateBroadcaster(userId != nil, keepingNewest: 1)
        self.machine = NotifierStateMachine(
            settings: configuration,
            identity: identity,
            active: NotifierStateMachine.TransportRef(id: 0, name: transport.name, dialect: transport.dialect))
    }

    deinit {
        // Released: every task stops, and every observer's stream ends (a consumer waiting on it would otherwise
        // wait, and hold its buffer, for ever).
        scope.close()
        hubs.finishAll()
        events.finish()
        states.finish()
        identities.finish()
        upstreamsAllowed.finish()
    }

    // MARK: Connection events and state

    /// Live, resumed (with the gap window), switched, session expired, signed out, network error, stream failed,
    /// events lost (with stream, count and window), suspended.
    public func connectionEvents() -> AsyncStream<NotifierConnectionEvent> {
        events.makeStream(onLastObserverGone: {})
    }

    /// How many observe ``connectionEvents()`` now (tests wait for an observer to be watching).
    package nonisolated var connectionEventObserverCount: Int { events.observerCount }

    /// Whether the notifier has a user: its `userId` at creation, then the newest ``update(userId:organizationId:)``'s
    /// (set before the update runs, as the state machine takes it). Read without the actor: a store made over the
    /// notifier takes it synchronously.
    package nonisolated var isSignedIn: Bool { identities.current?.userId != nil }

    /// The current identity, then each new one ``update(userId:organizationId:)`` gives (the same one again is not
    /// repeated), newest only; it ends when the notifier is shut down or released. What a failback probe, subscribed
    /// for one identity, watches to end when it changes.
    package nonisolated func identityChanges() -> AsyncStream<NotifierIdentity> { identities.makeStream() }

    /// Whether upstreams run when observed: signed in, the session not expired or signed out by the server (until the
    /// next ``update(userId:organizationId:)``), not suspended, not shut down. Unlike ``isSignedIn``, it follows the state
    /// machine: what a failback probe waits for.
    package nonisolated var runsUpstreams: Bool { upstreamsAllowed.current ?? false }

    /// ``runsUpstreams`` now, then each change; it ends when the notifier is shut down or released.
    package nonisolated func runsUpstreamsChanges() -> AsyncStream<Bool> { upstreamsAllowed.makeStream() }

    /// How many operations (identity updates, switches, resumptions) are asked for and not yet done (tests wait for one
    /// to be queued).
    package var pendingOperationCount: Int { waiters.count }

    /// The connection as an app shows it: connecting, live, reconnecting, offline or suspended. Starts with the
    /// current state and follows whichever transport is active.
    public func connectionStates() -> AsyncStream<NotifierConnectionState> {
        states.makeStream()
    }

    /// The current connection state (see ``connectionStates()``).
    public var connectionState: NotifierConnectionState { states.current ?? .offline }  // made with `.offline`: never nil

    /// The name of the transport in use (`"appsync"` or `"graphql"`).
    public var activeTransportName: String { machine.active.name }

    /// The transport in use.
    package var activeTransport: any RealtimeTransport { transports[machine.active.id]! }

    /// The dialect of the transport in use: the one record of which transport is active (`RealtimeStack` reads it).
    package var activeDialect: TransportDialect { machine.active.dialect }

    /// Delivered, dropped and undecodable counts.
    public func statistics() -> NotifierStatistics {
        NotifierStatistics(streams: hubs.counts, decodeFailures: router.decodeFailures, transport: machine.active.name)
    }

    /// Whether the upstream subscriptions are running (signed in, in the foreground, something observed).
    public var isConnectedUpstream: Bool { machine.isConnectedUpstream }

    /// How many identity updates, switches, suspensions or resumptions wait for the one running (for tests).
    var waitingOperations: Int { machine.waitingOperations }

    // MARK: The state machine

    /// Feeds `event` to the state machine and performs what it says.
    func receive(_ event: NotifierStateMachine.Event) {
        perform(machine.handle(event, now: wallClock.now()))
        upstreamsAllowed.update(machine.lifecycle == .foreground && machine.session.allowsRuns)
    }

    /// Starts the operation `event` names and returns when the machine says it has taken effect, or throws why it
    /// could not (only a switch can fail).
    func run(_ event: (_ operation: Int) -> NotifierStateMachine.Event) async throws {
        let operation = waiters.next()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiters.add(operation, continuation)
            receive(event(operation))
        }
    }
}
