import Foundation
import Logging
import SubscriberCore

/// An AWS AppSync Events client: one WebSocket carrying many channel subscriptions, with reconnect and resubscribe,
/// a keep-alive watchdog, gap-free rotation before the maximum connection duration, and publish over WebSocket or HTTP.
///
/// ```swift
/// let transport = AppSyncEventsTransport(
///     configuration: .init(endpoint: try AppSyncEndpoint("https://example.appsync-api.us-east-1.amazonaws.com/event")),
///     auth: StaticAuthSession(.apiKey("da2-…")))
/// for try await event in await transport.subscribe(.channel("default/news")) {
///     if case .payload(let payload) = event { print(payload.text) }
/// }
/// ```
public actor AppSyncEventsTransport: RealtimeTransport {
    /// `"appsync"`.
    public nonisolated let name = "appsync"
    /// AppSync Events channels.
    public nonisolated let dialect = TransportDialect.appSyncChannels

    let configuration: AppSyncEventsConfiguration
    let auth: any AuthSession
    let connector: any WebSocketConnector
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let makeID: @Sendable () -> String
    let httpPublisher: AppSyncHTTPPublisher
    let states = ConnectionStateBroadcaster()

    var subscriptions: [String: AppSyncSubscription] = [:]
    var nextSequence = 0
    var links: [Int: AppSyncLink] = [:]
    var nextGeneration = 0
    var primary: Int?
    var rotation: AppSyncRotation?
    var pendingPublishes: [String: AppSyncPendingPublish] = [:]
    var connectionWaiters: [Int: CheckedContinuation<Int, any Error>] = [:]
    var nextWaiterID = 0
    var supervisor: Task<Void, Never>?
    /// Bumped by `disconnect()`, so a cancelled supervisor that wakes late changes nothing.
    var epoch = 0

    /// Creates a transport. Nothing connects until the first subscribe or publish.
    /// - Parameters:
    ///   - configuration: endpoint, timeouts, policies.
    ///   - auth: asked for sign-in state and fresh credentials before every connection attempt.
    ///   - connector: the WebSocket implementation (default: swift-websocket's `WSClient`).
    ///   - httpClient: the HTTP implementation for `POST /event` (default: URLSession).
    ///   - clock: runs every timer; inject a manual clock in tests.
    ///   - wallClock: timestamps gap windows.
    ///   - logger: never receives tokens, keys or signatures.
    ///   - makeID: subscription and publish ids (UUIDs by default).
    public init(
        configuration: AppSyncEventsConfiguration,
        auth: any AuthSession,
        connector: any WebSocketConnector = NIOWebSocketConnector(),
        httpClient: any HTTPClient = URLSessionHTTPClient(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system,
        logger: Logger = Logger(label: "vortex.appsync"),
        makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) {
        self.configuration = configuration
        self.auth = auth
        self.connector = connector
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.makeID = makeID
        self.httpPublisher = AppSyncHTTPPublisher(endpoint: configuration.endpoint, client: httpClient)
    }

    // MARK: RealtimeTransport

    /// Subscribes to an AppSync Events channel (wildcards allowed as a final `/*`).
    public func subscribe(_ request: SubscriptionRequest) -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        guard case .channel(let rawChannel) = request.topic else {
            return Self.failedStream(.unsupported("AppSync Events subscribes to channels, not GraphQL operations"))
        }
        let channel: String
        do { channel = try ChannelName.validate(rawChannel, for: .subscribe) } catch { return Self.failedStream(error) }
        guard subscriptions.count < configuration.maxSubscriptions else {
            return Self.failedStream(.subscriptionLimitReached(configuration.maxSubscriptions))
        }
        let id = makeID()
        let (stream, sink) = SubscriptionSink.make(bufferLimit: configuration.subscriptionBufferLimit, label: channel, logger: logger)
        sink.continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination, let self else { return }
            Task { await self.cancelSubscription(id) }
        }
        var record = AppSyncSubscription(id: id, channel: channel, sequence: nextSequence, sink: sink)
        nextSequence += 1
        if let primary, links[primary]?.acked == true { record.deliveringOn = primary }
        subscriptions[id] = record
        logger.debug("subscribe", metadata: ["channel": "\(channel)", "id": "\(id)"])
        if let target = record.deliveringOn {
            Task { await self.sendSubscribe(id, on: target) }
        }
        if let to = rotation?.to {
            subscriptions[id]?.rotationTarget = to
            Task { await self.sendSubscribe(id, on: to) }
        }
        ensureSupervisor()
        return stream
    }

    /// Publishes 1 to 5 events (each at most 240 KB of JSON) to a channel, over the configured route.
    public func publish(_ request: PublishRequest) async throws -> PublishResult {
        let channel = try ChannelName.validate(request.channel, for: .publish)
        try AppSyncPublishLimits.validate(request.events)
        switch configuration.publishRoute {
        case .http:
            let credentials = try await auth.credentials(forceRefresh: false)
            let authorizer = AppSyncAuthorizer(endpoint: configuration.endpoint, credentials: credentials, now: { [wallClock] in wallClock.now() })
            return try await httpPublisher.publish(channel: channel, events: request.events, authorizer: authorizer)
        case .webSocket:
            return try await publishOverWebSocket(channel: channel, events: request.events)
        }
    }

    /// Closes every connection normally, ends all subscription streams normally and stops reconnecting.
    public func disconnect() async {
        epoch += 1
        supervisor?.cancel()
        supervisor = nil
        rotation?.deadline?.cancel()
        rotation = nil
        let ending = subscriptions.values
        subscriptions.removeAll()
        for subscription in ending { subscription.sink.finish() }
        failPublishes(with: RealtimeError.disconnected)
        failConnectionWaiters(with: RealtimeError.disconnected)
        primary = nil
        let open = links
        for (generation, link) in open where link.end == nil {
            links[generation]?.requestedEnd = .requested
            for task in link.tasks { task.cancel() }
            await link.connection.close(code: 1000, reason: "client disconnect")
        }
        // Links whose receive loop has not reported the close yet still have waiters to release.
        for generation in Array(links.keys) { linkEnded(generation, .requested) }
        links.removeAll()
        states.update(.disconnected(.requested))
    }

    /// A new stream of connection states, starting with the current one.
    public func connectionStates() -> AsyncStream<ConnectionState> { states.makeStream() }

    /// The subscriptions currently held (live or waiting), for diagnostics.
    public var subscriptionCount: Int { subscriptions.count }

    // MARK: Supervisor

    var wantsConnection: Bool { !subscriptions.isEmpty || !connectionWaiters.isEmpty || !pendingPublishes.isEmpty }

    func ensureSupervisor() {
        guard supervisor == nil else { return }
        let myEpoch = epoch
        supervisor = Task { await self.supervise(epoch: myEpoch) }
    }

    /// Connects, runs the connection until it ends, and reconnects per policy while anything needs a connection.
    private func supervise(epoch myEpoch: Int) async {
        defer { if epoch == myEpoch { supervisor = nil } }
        let supervisor = ConnectionSupervisor(
            policy: configuration.reconnectPolicy, auth: auth, clock: clock, states: states, logger: logger)
        await supervisor.run(
            isCurrent: { epoch == myEpoch },
            wantsConnection: { wantsConnection },
            attempt: { credentials in
                switch await establish(credentials: credentials) {
                case .failure(let end):
                    return ConnectionSupervisor.Outcome(acknowledged: false, ending: end.reconnectEnding, detail: "\(end)")
                case .success(let generation):
                    guard epoch == myEpoch else { return ConnectionSupervisor.Outcome(acknowledged: false, ending: .requested, detail: "superseded") }
                    let end = await runPrimary(generation)
                    return ConnectionSupervisor.Outcome(acknowledged: true, ending: end.reconnectEnding, detail: "\(end)")
                }
            },
            stop: { reason, error in shutdown(reason, error: error) })
    }

    /// Makes `generation` the primary link, resubscribes everything on it and waits until it (or its rotation
    /// successor) ends.
    private func runPrimary(_ generation: Int) async -> AppSyncLinkEnd {
        primary = generation
        states.update(.connected)
        resumeConnectionWaiters(generation)
        scheduleRotation(of: generation)
        await activateSubscriptions(on: generation)
        var current = generation
        while true {
            let end = await waitForEnd(of: current)
            links[current] = nil
            if let next = primary, next != current, links[next]?.end == nil {
                current = next
                continue
            }
            if primary == current { primary = nil }
            abortRotation()
            interruptSubscriptions()
            failPublishes(on: current, with: end.error)
            return end
        }
    }

    /// Sends `subscribe` for every subscription (same ids) on a newly acknowledged primary link.
    private func activateSubscriptions(on generation: Int) async {
        let ids = subscriptions.values.sorted { $0.sequence < $1.sequence }.map(\.id)
        for id in ids { subscriptions[id]?.deliveringOn = generation }
        for id in ids where subscriptions[id]?.deliveringOn == generation {
            await sendSubscribe(id, on: generation)
        }
    }

    /// Marks every subscription as no longer live; the gap starts now (or earlier, if it already had).
    private func interruptSubscriptions() {
        let now = wallClock.now()
        for id in Array(subscriptions.keys) {
            guard var record = subscriptions[id] else { continue }
            if record.isLive || record.interruptedAt != nil { record.interruptedAt = record.interruptedAt ?? now }
            record.isLive = false
            record.deliveringOn = nil
            record.clearRotation()
            record.overlapLog = []
            subscriptions[id] = record
        }
    }

    /// Ends everything with an error and stops: signed out, session expired, or the policy gave up.
    func shutdown(_ reason: DisconnectReason, error: RealtimeError) {
        logger.warning("transport stopped", metadata: ["reason": "\(reason)"])
        let ending = subscriptions.values
        subscriptions.removeAll()
        for subscription in ending { subscription.sink.finish(throwing: error) }
        failPublishes(with: error)
        failConnectionWaiters(with: error)
        states.update(.disconnected(reason))
    }

    // MARK: Links

    /// Opens a connection, sends `connection_init` and waits for `connection_ack`.
    func establish(credentials: AuthCredentials) async -> Result<Int, AppSyncLinkEnd> {
        let authorizer = AppSyncAuthorizer(endpoint: configuration.endpoint, credentials: credentials, now: { [wallClock] in wallClock.now() })
        let request = WebSocketRequest(url: configuration.endpoint.realtimeURL, subprotocols: authorizer.subprotocols())
        let connection: any WebSocketConnection
        do {
            connection = try await connector.connect(request, timeout: configuration.ackTimeout, clock: clock)
        } catch {
            let detail = String(describing: error)
            let authRejected = (error as? WebSocketSeamError)?.isAuthenticationRejection ?? false
            logger.warning("connect failed", metadata: ["error": "\(detail)"])
            return .failure(.openFailed(detail, authRejected: authRejected))
        }
        let generation = nextGeneration
        nextGeneration += 1
        links[generation] = AppSyncLink(generation: generation, connection: connection, authorizer: authorizer)
        startReceiving(generation, connection)
        let ackTimeout = configuration.ackTimeout
        links[generation]?.tasks.append(Task { [weak self, clock] in
            do { try await clock.sleep(for: ackTimeout, tolerance: nil) } catch { return }
            await self?.ackTimedOut(generation)
        })
        do {
            try await connection.send(.text(AppSyncOutboundMessage.connectionInit))
        } catch {
            logger.debug("connection_init not sent", metadata: ["error": "\(error)"])
        }
        let outcome: Result<Void, AppSyncLinkEnd> = await withCheckedContinuation { continuation in
            guard let link = links[generation] else { return continuation.resume(returning: .failure(.requested)) }
            if link.acked { return continuation.resume(returning: .success(())) }
            if let end = link.end { return continuation.resume(returning: .failure(end)) }
            links[generation]?.ackWaiter = continuation
        }
        switch outcome {
        case .success: return .success(generation)
        case .failure(let end):
            links[generation] = nil
            return .failure(end)
        }
    }

    private func startReceiving(_ generation: Int, _ connection: any WebSocketConnection) {
        let task = Task { [weak self] in
            while true {
                let event = await connection.receive()
                guard let self else {
                    await connection.close(code: 1000, reason: "client released")
                    return
                }
                guard await self.handleInbound(event, on: generation) else { return }
            }
        }
        links[generation]?.tasks.append(task)
    }

    func waitForEnd(of generation: Int) async -> AppSyncLinkEnd {
        await withCheckedContinuation { continuation in
            guard let link = links[generation] else { return continuation.resume(returning: .requested) }
            if let end = link.end { return continuation.resume(returning: end) }
            links[generation]?.endWaiters.append(continuation)
        }
    }

    /// Closes a link on purpose, recording why.
    func close(_ generation: Int, as reason: AppSyncLinkEnd, code: UInt16 = 1000, message: String) async {
        guard let link = links[generation], link.end == nil else { return }
        if link.requestedEnd == nil { links[generation]?.requestedEnd = reason }
        await link.connection.close(code: code, reason: message)
    }

    func linkEnded(_ generation: Int, _ end: AppSyncLinkEnd) {
        guard var link = links[generation], link.end == nil else { return }
        link.end = end
        let waiters = link.endWaiters
        let ackWaiter = link.ackWaiter
        link.endWaiters = []
        link.ackWaiter = nil
        for task in link.tasks { task.cancel() }
        link.tasks = []
        links[generation] = link
        ackWaiter?.resume(returning: .failure(end))
        for waiter in waiters { waiter.resume(returning: end) }
        if rotation?.to == generation { abortRotation() }
        if rotation?.from == generation { salvageRotation() }
    }

    private func ackTimedOut(_ generation: Int) async {
        guard let link = links[generation], !link.acked, link.end == nil else { return }
        logger.warning("no connection_ack in time", metadata: ["timeout": "\(configuration.ackTimeout)"])
        await close(generation, as: .ackTimeout(configuration.ackTimeout), message: "connection_ack timeout")
    }

    func keepAliveExpired(_ generation: Int, after timeout: Duration) async {
        logger.warning("keep-alive silence; closing", metadata: ["timeout": "\(timeout)"])
        await close(generation, as: .keepAliveTimeout(timeout), message: "keep-alive timeout")
    }

    func closeIfIdle() async {
        guard !wantsConnection, rotation == nil, let primary else { return }
        logger.debug("last subscription ended; closing")
        await close(primary, as: .requested, message: "idle")
    }

    // MARK: Subscriptions

    func sendSubscribe(_ id: String, on generation: Int) async {
        guard let record = subscriptions[id], let link = links[generation], link.end == nil else { return }
        let body = AppSyncOutboundMessage.subscribeSigningBody(channel: record.channel)
        let message = AppSyncOutboundMessage.subscribe(id: id, channel: record.channel, authorization: link.authorizer.authorization(body: body))
        do { try await link.connection.send(.text(message)) } catch {
            logger.debug("subscribe not sent; the link is ending", metadata: ["id": "\(id)"])
        }
    }

    func cancelSubscription(_ id: String) async {
        guard let record = subscriptions.removeValue(forKey: id) else { return }
        logger.debug("unsubscribe", metadata: ["channel": "\(record.channel)", "id": "\(id)"])
        for generation in [record.deliveringOn, record.rotationTarget].compactMap({ $0 }) {
            guard let link = links[generation], link.end == nil else { continue }
            try? await link.connection.send(.text(AppSyncOutboundMessage.unsubscribe(id: id)))
        }
        await rotationProgress()
        await closeIfIdle()
    }

    static func failedStream(_ error: RealtimeError) -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        AsyncThrowingStream { $0.finish(throwing: error) }
    }

    // MARK: Waiters

    /// The acknowledged primary link, connecting first if needed.
    func connectedLink() async throws -> Int {
        if let primary, links[primary]?.acked == true, links[primary]?.end == nil { return primary }
        let waiterID = nextWaiterID
        nextWaiterID += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                connectionWaiters[waiterID] = continuation
                ensureSupervisor()
            }
        } onCancel: {
            Task { await self.cancelConnectionWaiter(waiterID) }
        }
    }

    private func cancelConnectionWaiter(_ id: Int) async {
        connectionWaiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
        await closeIfIdle()
    }

    private func resumeConnectionWaiters(_ generation: Int) {
        let waiters = connectionWaiters.values
        connectionWaiters.removeAll()
        for waiter in waiters { waiter.resume(returning: generation) }
    }

    func failConnectionWaiters(with error: any Error) {
        let waiters = connectionWaiters.values
        connectionWaiters.removeAll()
        for waiter in waiters { waiter.resume(throwing: error) }
    }
}
