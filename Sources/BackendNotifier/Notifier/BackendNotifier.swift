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
/// transport switch. What they may have missed is reported on ``connectionEvents()``. Many observers of one method
/// share one upstream subscription, which ends when the last observer cancels.
public actor BackendNotifier {
    struct UpstreamRun {
        let generation: Int
        let task: ScopedTask
        /// Whether its events reach the public streams (closed while a switch prepares the new transport).
        let gate: Locked<Bool>
    }

    struct PendingSwitch {
        var waiting: Set<Upstream>
        let continuation: CheckedContinuation<Void, any Error>
    }

    let configuration: NotifierConfiguration
    let hubs: NotifierHubs
    let router: EventRouter
    let events: StreamHub<NotifierConnectionEvent>
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let metrics: NotifierMetrics
    /// Serialises identity updates, transport switches, suspension and resumption (see ``OperationGate``).
    let gate = OperationGate()
    /// The active transport's name, readable from the delivery path without hopping onto the actor.
    let activeName: Locked<String>
    let states = NotifierStateBroadcaster()
    /// Every background task of the notifier (upstream pumps, the state follower, timers) runs in this scope; releasing
    /// the notifier cancels them all.
    let scope = TaskScope()

    var transport: any RealtimeTransport
    var userId: String?
    var organizationId: String?
    var runs: [Upstream: UpstreamRun] = [:]
    var generation = 0
    var suspendedAt: Date?
    var resumeGaps: [Upstream: Date] = [:]
    var backgroundTask: ScopedTask?
    var pendingSwitches: [Int: PendingSwitch] = [:]
    /// The task following the active transport's connection states, and which transport it follows.
    var stateTask: ScopedTask?
    var stateWatch = 0
    var transportState: ConnectionState = .idle
    var connectedSince: Date?
    /// `sessionExpired` or `signedOut` has been reported: upstreams stay down until `update(userId:organizationId:)`.
    var sessionEnded = false
    /// `networkError` has been reported for the current offline episode.
    var networkErrorReported = false
    var offlineTimer: ScopedTask?

    /// Creates a notifier on `transport` for a signed-in user (`userId` `nil` means signed out: no connection).
    /// - Parameters:
    ///   - transport: the transport to start on (``switchTransport(to:because:)`` changes it later).
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
        self.transport = transport
        self.userId = userId
        self.organizationId = organizationId
    }

    deinit {
        scope.close()
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
    public var activeTransportName: String { transport.name }

    /// The transport in use.
    package var activeTransport: any RealtimeTransport { transport }

    /// Delivered, dropped and undecodable counts.
    public func statistics() -> NotifierStatistics {
        NotifierStatistics(
            streams: hubs.counts.mapValues { NotifierStatistics.StreamStatistics(delivered: $0.delivered, dropped: $0.dropped) },
            decodeFailures: router.decodeFailures,
            transport: transport.name)
    }

    /// Whether the upstream subscriptions are running (signed in, in the foreground, something observed).
    public var isConnectedUpstream: Bool { !runs.isEmpty }

    /// How many identity updates, switches, suspensions or resumptions wait for the one running (for tests).
    var waitingOperations: Int { gate.waiterCount }

    // MARK: Observers and upstreams

    private func observe<T: Sendable>(_ hub: StreamHub<T>, _ upstream: Upstream) -> AsyncStream<T> {
        let stream = hub.makeStream { [weak self] in
            self?.scope.spawn { [weak self] in await self?.releaseIfUnused(upstream) }
        }
        // While an identity update, switch, suspension or resumption runs, it starts this upstream when it ends, with
        // the identity and transport it leaves behind.
        if !gate.isBusy { ensureRunning(upstream) }
        return stream
    }

    /// Starts `upstream` on the active transport if it is observed and allowed to run. Callers hold the gate or
    /// checked that it is free.
    func ensureRunning(_ upstream: Upstream) {
        guard runs[upstream] == nil, suspendedAt == nil, !sessionEnded, hubs.isDemanded(upstream) else { return }
        if let run = start(upstream, on: transport, delivering: true, generation: generation) {
            runs[upstream] = run
            followStates()
            refreshState()
        }
    }

    /// Starts every observed upstream that is not running.
    func startDemanded() {
        for upstream in Upstream.allCases { ensureRunning(upstream) }
        refreshState()
    }

    func releaseIfUnused(_ upstream: Upstream) {
        guard !hubs.isDemanded(upstream), let run = runs.removeValue(forKey: upstream) else { return }
        run.task.cancel()
        refreshState()
    }

    /// Subscribes `upstream` on `transport` with the current identity; its events reach the public streams while the
    /// gate is open.
    func start(_ upstream: Upstream, on transport: any RealtimeTransport, delivering: Bool, generation: Int) -> UpstreamRun? {
        guard
            let request = upstream.request(
                dialect: transport.dialect, userId: userId, organizationId: organizationId, namespace: configuration.channelNamespace,
                operations: configuration.graphQLOperations)
        else { return nil }
        let gate = Locked(delivering)
        let router = self.router
        let dialect = transport.dialect
        let name = transport.name
        let task = scope.spawn { [weak self] in
            let stream = await transport.subscribe(request)
            // Batched delivery: the observers this pump delivers to are woken once each time it has drained its
            // transport stream (the stream's buffer flushes the batch then), not once per value.
            let batch = DeliveryBatch()
            defer { batch.close() }
            await DeliveryBatch.$current.withValue(batch) { [weak self] in
                do {
                    var flushedByUpstream = false
                    for try await event in stream {
                        // A transport stream that is not a StreamBuffer cannot flush the batch: do it per value.
                        defer {
                            if !flushedByUpstream {
                                flushedByUpstream = batch.isFlushedByUpstream
                                if !flushedByUpstream { batch.flush() }
                            }
                        }
                        switch event {
                        case .payload(let payload):
                            if gate.withLock({ $0 }) { router.route(payload, from: upstream, dialect: dialect) }
                        case .live:
                            await self?.upstreamLive(upstream, generation: generation, transport: name)
                        case .resumed(let gap):
                            guard gate.withLock({ $0 }) else { continue }
                            await self?.emit(.resumed(stream: upstream.rawValue, transport: name, gap: gap))
                        case .lost(let loss):
                            guard gate.withLock({ $0 }) else { continue }
                            await self?.emit(.eventsLost(stream: upstream.rawValue, transport: name, loss: loss))
                        }
                    }
                    await self?.upstreamEnded(upstream, generation: generation, error: nil, transport: name)
                } catch {
                    await self?.upstreamEnded(upstream, generation: generation, error: error, transport: name)
                }
            }
        }
        return UpstreamRun(generation: generation, task: task, gate: gate)
    }

    private func upstreamLive(_ upstream: Upstream, generation: Int, transport name: String) {
        if var pending = pendingSwitches[generation] {
            pending.waiting.remove(upstream)
            if pending.waiting.isEmpty {
                pendingSwitches[generation] = nil
                pending.continuation.resume()
            } else {
                pendingSwitches[generation] = pending
            }
            return
        }
        guard runs[upstream]?.generation == generation else { return }
        if let since = resumeGaps.removeValue(forKey: upstream) {
            emit(.resumed(stream: upstream.rawValue, transport: name, gap: GapWindow(start: since, end: wallClock.now())))
        } else {
            emit(.live(stream: upstream.rawValue, transport: name))
        }
    }

    private func upstreamEnded(_ upstream: Upstream, generation: Int, error: (any Error)?, transport name: String) {
        if let pending = pendingSwitches.removeValue(forKey: generation) {
            pending.continuation.resume(throwing: error ?? RealtimeError.disconnected)
            return
        }
        guard runs[upstream]?.generation == generation else { return }
        runs[upstream] = nil
        defer { refreshState() }
        guard let error else {
            logger.info("upstream ended by the server", metadata: ["stream": "\(upstream.rawValue)"])
            return
        }
        let realtime = error as? RealtimeError ?? .network("\(error)")
        switch realtime {
        case .sessionExpired, .signedOut:
            // One report per episode, however many upstreams end; the rest stop too until the app calls update.
            guard !sessionEnded else { return }
            sessionEnded = true
            stopUpstreams()
            emit(realtime == .signedOut ? .signedOut : .sessionExpired)
        default:
            emit(.streamFailed(stream: upstream.rawValue, transport: name, error: realtime))
            if case .networkError(let detail) = VortexError(realtime) { reportNetworkError(detail) }
        }
    }

    func emit(_ event: NotifierConnectionEvent) {
        events.yield(event)
    }

    /// Stops every upstream subscription (observers keep their streams).
    func stopUpstreams() {
        for run in runs.values {
            run.gate.withLock { $0 = false }
            run.task.cancel()
        }
        runs.removeAll()
    }

    // MARK: The active transport's states → notifier state, metrics, network errors

    /// Follows the active transport's connection states (once per transport; a switch follows the new one).
    func followStates() {
        guard stateTask == nil else { return }
        stateWatch += 1
        let watch = stateWatch
        let transport = self.transport
        stateTask = scope.spawn { [weak self] in
            for await state in await transport.connectionStates() {
                guard let self, !Task.isCancelled else { return }
                await self.transportStateChanged(state, watch: watch, transport: transport.name)
            }
        }
    }

    func stopFollowingStates() {
        stateTask?.cancel()
        stateTask = nil
        stateWatch += 1
        if let since = connectedSince {
            metrics.connected(for: .seconds(wallClock.now().timeIntervalSince(since)), transport: transport.name)
            connectedSince = nil
        }
        transportState = .idle
    }

    private func transportStateChanged(_ state: ConnectionState, watch: Int, transport name: String) {
        guard watch == stateWatch else { return }
        if let since = connectedSince, state != .connected {
            metrics.connected(for: .seconds(wallClock.now().timeIntervalSince(since)), transport: name)
            connectedSince = nil
        }
        switch state {
        case .connecting: metrics.connectionAttempt(transport: name)
        case .reconnecting: metrics.reconnect(transport: name)
        case .connected: if connectedSince == nil { connectedSince = wallClock.now() }
        case .disconnected(.failed(let error)): reportNetworkError(error.description)
        case .idle, .disconnected: break
        }
        transportState = state
        refreshState()
    }

    /// Recomputes the notifier's state and arms or disarms the network-error limit.
    func refreshState() {
        let state: NotifierConnectionState =
            if suspendedAt != nil { .suspended } else if userId == nil || sessionEnded { .offline } else {
                NotifierConnectionState(transportState, upstreamsRunning: !runs.isEmpty)
            }
        states.update(state)
        let waitingForConnection = (state == .connecting || state == .reconnecting) && !runs.isEmpty
        if state == .live { networkErrorReported = false }
        if waitingForConnection {
            guard offlineTimer == nil, !networkErrorReported else { return }
            let limit = configuration.networkErrorAfter
            offlineTimer = scope.spawn { [weak self, clock] in
                do { try await clock.sleep(for: limit, tolerance: nil) } catch { return }
                await self?.offlineLimitReached(limit)
            }
        } else {
            offlineTimer?.cancel()
            offlineTimer = nil
        }
    }

    private func offlineLimitReached(_ limit: Duration) {
        offlineTimer = nil
        guard states.current == .connecting || states.current == .reconnecting else { return }
        reportNetworkError("no live connection for \(limit)")
    }

    func reportNetworkError(_ detail: String) {
        guard !networkErrorReported else { return }
        networkErrorReported = true
        offlineTimer?.cancel()
        offlineTimer = nil
        logger.warning("network error", metadata: ["detail": "\(detail)"])
        emit(.networkError(detail))
    }
}
