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
        let task: Task<Void, Never>
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

    var transport: any RealtimeTransport
    var userId: String?
    var organizationId: String?
    var runs: [Upstream: UpstreamRun] = [:]
    var generation = 0
    var suspendedAt: Date?
    var resumeGaps: [Upstream: Date] = [:]
    var backgroundTask: Task<Void, Never>?
    var stateTask: Task<Void, Never>?
    var pendingSwitches: [Int: PendingSwitch] = [:]

    /// Creates a notifier on `transport` for a signed-in user (`userId` `nil` means signed out: no connection).
    /// - Parameters:
    ///   - transport: the transport to start on (``switchTransport(to:because:)`` changes it later).
    ///   - userId: the signed-in user, or `nil` when signed out.
    ///   - organizationId: the user's organization (the GraphQL subscriptions are scoped by it).
    ///   - configuration: buffers, background grace, switch timeout, channel namespace.
    ///   - filter: client-side device-group filter (pass-through by default).
    ///   - clock: runs the background grace delay and the switch timeout.
    ///   - wallClock: timestamps gap windows and latency.
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
        let hubs = NotifierHubs(policy: configuration.bufferPolicy) { stream in
            metrics.bufferDrop(stream: stream)
            logger.warning("observer buffer full; dropped a value", metadata: ["stream": "\(stream)"])
        }
        self.configuration = configuration
        self.hubs = hubs
        self.router = EventRouter(hubs: hubs, filter: filter, metrics: metrics, logger: logger, wallClock: wallClock)
        self.events = StreamHub(name: "connectionEvents", policy: ObserverBufferPolicy(limit: 64)) { _ in }
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.metrics = metrics
        self.transport = transport
        self.userId = userId
        self.organizationId = organizationId
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

    /// Live, resumed (with the gap window), switched, session expired, signed out, suspended.
    public func connectionEvents() -> AsyncStream<NotifierConnectionEvent> {
        events.makeStream(onLastObserverGone: {})
    }

    /// The name of the transport in use (`"appsync"` or `"graphql"`).
    public var activeTransportName: String { transport.name }

    /// The transport in use.
    public var activeTransport: any RealtimeTransport { transport }

    /// Delivered, dropped and undecodable counts.
    public func statistics() -> NotifierStatistics {
        NotifierStatistics(
            streams: hubs.counts.mapValues { NotifierStatistics.StreamStatistics(delivered: $0.delivered, dropped: $0.dropped) },
            decodeFailures: router.decodeFailures,
            transport: transport.name)
    }

    /// Whether the upstream subscriptions are running (signed in, in the foreground, something observed).
    public var isConnectedUpstream: Bool { !runs.isEmpty }

    // MARK: Observers and upstreams

    private func observe<T: Sendable>(_ hub: StreamHub<T>, _ upstream: Upstream) -> AsyncStream<T> {
        let stream = hub.makeStream { [weak self] in
            Task { await self?.releaseIfUnused(upstream) }
        }
        ensureRunning(upstream)
        return stream
    }

    func ensureRunning(_ upstream: Upstream) {
        guard runs[upstream] == nil, suspendedAt == nil, hubs.isDemanded(upstream) else { return }
        if let run = start(upstream, on: transport, delivering: true, generation: generation) { runs[upstream] = run }
    }

    func releaseIfUnused(_ upstream: Upstream) {
        guard !hubs.isDemanded(upstream), let run = runs.removeValue(forKey: upstream) else { return }
        run.task.cancel()
    }

    /// Subscribes `upstream` on `transport`; its events reach the public streams while the gate is open.
    func start(_ upstream: Upstream, on transport: any RealtimeTransport, delivering: Bool, generation: Int) -> UpstreamRun? {
        guard let request = upstream.request(
            dialect: transport.dialect, userId: userId, organizationId: organizationId, namespace: configuration.channelNamespace)
        else { return nil }
        observeStates(of: transport)
        let gate = Locked(delivering)
        let router = self.router
        let dialect = transport.dialect
        let name = transport.name
        let task = Task { [weak self] in
            let stream = await transport.subscribe(request)
            do {
                for try await event in stream {
                    switch event {
                    case .payload(let payload):
                        if gate.withLock({ $0 }) { router.route(payload, from: upstream, dialect: dialect) }
                    case .live:
                        await self?.upstreamLive(upstream, generation: generation, transport: name)
                    case .resumed(let gap):
                        await self?.emit(.resumed(stream: upstream.rawValue, transport: name, gap: gap))
                    case .lost(let loss):
                        await self?.emit(.eventsLost(stream: upstream.rawValue, transport: name, loss: loss))
                    }
                }
                await self?.upstreamEnded(upstream, generation: generation, error: nil, transport: name)
            } catch {
                await self?.upstreamEnded(upstream, generation: generation, error: error, transport: name)
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
        guard let error else {
            logger.info("upstream ended by the server", metadata: ["stream": "\(upstream.rawValue)"])
            return
        }
        switch error as? RealtimeError {
        case .sessionExpired?: emit(.sessionExpired)
        case .signedOut?: emit(.signedOut)
        case let realtime?: emit(.streamFailed(stream: upstream.rawValue, transport: name, error: realtime))
        case nil: emit(.streamFailed(stream: upstream.rawValue, transport: name, error: .network("\(error)")))
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

    // MARK: Transport states → metrics and events

    private func observeStates(of transport: any RealtimeTransport) {
        guard stateTask == nil else { return }
        let metrics = self.metrics
        let wallClock = self.wallClock
        let name = transport.name
        stateTask = Task {
            var connectedSince: Date?
            for await state in await transport.connectionStates() {
                if let since = connectedSince, state != .connected {
                    metrics.connected(for: .seconds(wallClock.now().timeIntervalSince(since)), transport: name)
                    connectedSince = nil
                }
                switch state {
                case .connecting: metrics.connectionAttempt(transport: name)
                case .reconnecting: metrics.reconnect(transport: name)
                case .connected: connectedSince = wallClock.now()
                case .idle, .disconnected: break
                }
                if Task.isCancelled { return }
            }
        }
    }

    func stopObservingStates() {
        stateTask?.cancel()
        stateTask = nil
    }
}
