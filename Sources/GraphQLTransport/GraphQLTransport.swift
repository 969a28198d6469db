import Foundation
import Logging
import SubscriberCore

/// A graphql-transport-ws client: lazy connect, `connection_init` with credentials fetched anew for every attempt,
/// ack timeout, ping/pong, the reference client's close-code policy, reconnect with resubscribe under the same ids,
/// and `resumed(gap:)` after every reconnect — the rollback path, as robust as the AppSync one.
///
/// When a subscription counts as **live**: graphql-transport-ws has no subscribe acknowledgement, so the stream
/// yields `SubscriptionEvent/live` once `subscribe` has been sent on an acknowledged connection. A server that then
/// rejects the operation answers with `error`, which ends the stream with `RealtimeError/graphQLErrors(_:)`.
public actor GraphQLTransport: RealtimeTransport {
    /// `"graphql"`.
    public nonisolated let name = "graphql"
    /// GraphQL operations.
    public nonisolated let dialect = TransportDialect.graphQL
    /// The WebSocket subprotocol.
    public static let subprotocol = "graphql-transport-ws"

    let configuration: GraphQLTransportConfiguration
    let auth: any AuthSession
    let connector: any WebSocketConnector
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let makeID: @Sendable () -> String
    let states = ConnectionStateBroadcaster()

    var subscriptions: [String: GraphQLSubscriptionRecord] = [:]
    var nextSequence = 0
    var link: GraphQLLink?
    var nextGeneration = 0
    var supervisor: Task<Void, Never>?
    var idleTimer: Task<Void, Never>?
    var epoch = 0

    /// Creates a transport. Nothing connects until the first subscribe.
    public init(
        configuration: GraphQLTransportConfiguration,
        auth: any AuthSession,
        connector: any WebSocketConnector = NIOWebSocketConnector(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system,
        logger: Logger = Logger(label: "vortex.graphql"),
        makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) {
        self.configuration = configuration
        self.auth = auth
        self.connector = connector
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.makeID = makeID
    }

    // MARK: RealtimeTransport

    /// Starts a GraphQL subscription.
    public func subscribe(_ request: SubscriptionRequest) -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        guard case .graphQL(let operation) = request.topic else {
            return AsyncThrowingStream { $0.finish(throwing: RealtimeError.unsupported("GraphQL subscribes to operations, not AppSync channels")) }
        }
        let id = makeID()
        let label = operation.operationName ?? String(operation.query.prefix(60))
        let (stream, sink) = SubscriptionSink.make(bufferLimit: configuration.subscriptionBufferLimit, label: label, logger: logger)
        sink.continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination, let self else { return }
            Task { await self.cancelSubscription(id) }
        }
        subscriptions[id] = GraphQLSubscriptionRecord(id: id, operation: operation, sequence: nextSequence, sink: sink)
        nextSequence += 1
        idleTimer?.cancel()
        idleTimer = nil
        if let link, link.acked, link.end == nil {
            let generation = link.generation
            Task { await self.sendSubscribe(id, on: generation) }
        }
        ensureSupervisor()
        return stream
    }

    /// graphql-transport-ws has no publish: always throws `RealtimeError/unsupported(_:)`.
    public func publish(_ request: PublishRequest) async throws -> PublishResult {
        throw RealtimeError.unsupported("the GraphQL transport cannot publish; publish through the backend")
    }

    /// Closes with 1000, ends every stream normally and stops reconnecting.
    public func disconnect() async {
        epoch += 1
        supervisor?.cancel()
        supervisor = nil
        idleTimer?.cancel()
        idleTimer = nil
        let ending = subscriptions.values
        subscriptions.removeAll()
        for record in ending { record.sink.finish() }
        if let current = link, current.end == nil {
            link?.requestedEnd = .requested
            await current.connection.close(code: 1000, reason: "client disconnect")
            linkEnded(current.generation, .requested)
        }
        link = nil
        states.update(.disconnected(.requested))
    }

    /// A new stream of connection states, starting with the current one.
    public func connectionStates() -> AsyncStream<ConnectionState> { states.makeStream() }

    // MARK: Supervisor

    private func ensureSupervisor() {
        guard supervisor == nil else { return }
        let myEpoch = epoch
        supervisor = Task { await self.supervise(epoch: myEpoch) }
    }

    private func supervise(epoch myEpoch: Int) async {
        defer { if epoch == myEpoch { supervisor = nil } }
        let supervisor = ConnectionSupervisor(
            policy: configuration.reconnectPolicy, auth: auth, clock: clock, states: states, logger: logger)
        await supervisor.run(
            isCurrent: { epoch == myEpoch },
            wantsConnection: { !subscriptions.isEmpty },
            attempt: { credentials in
                switch await establish(credentials: credentials) {
                case .failure(let end):
                    return ConnectionSupervisor.Outcome(acknowledged: false, ending: reconnectEnding(end), detail: "\(end)")
                case .success(let generation):
                    guard epoch == myEpoch else { return ConnectionSupervisor.Outcome(acknowledged: false, ending: .requested, detail: "superseded") }
                    let end = await run(generation)
                    return ConnectionSupervisor.Outcome(acknowledged: true, ending: reconnectEnding(end), detail: "\(end)")
                }
            },
            stop: { reason, error in shutdown(reason, error: error) })
    }

    private func reconnectEnding(_ end: GraphQLLinkEnd) -> ReconnectBookkeeping.Ending {
        switch end {
        case .requested: .requested
        case .closed(let info): GraphQLCloseCode.ending(for: info, hasSubscriptions: !subscriptions.isEmpty)
        case .openFailed(let detail, authRejected: true): .authRejected(detail)
        case .openFailed, .ackTimeout, .pongTimeout, .protocolViolation: .retryable
        }
    }

    /// Resubscribes everything on the acknowledged link and waits for it to end.
    private func run(_ generation: Int) async -> GraphQLLinkEnd {
        states.update(.connected)
        let now = wallClock.now()
        markInterrupted(at: now)
        startPinging(generation)
        for id in subscriptions.values.sorted(by: { $0.sequence < $1.sequence }).map(\.id) {
            await sendSubscribe(id, on: generation)
        }
        let end = await waitForEnd(of: generation)
        let lostAt = wallClock.now()
        markInterrupted(at: lostAt)
        if link?.generation == generation { link = nil }
        return end
    }

    /// Every subscription that was live stops being live at `instant` (unless it already had), and must be re-sent.
    private func markInterrupted(at instant: Date) {
        for id in Array(subscriptions.keys) {
            guard var record = subscriptions[id] else { continue }
            record.sentOn = nil
            if record.everLive && record.interruptedAt == nil { record.interruptedAt = instant }
            subscriptions[id] = record
        }
    }

    private func shutdown(_ reason: DisconnectReason, error: RealtimeError) {
        logger.warning("transport stopped", metadata: ["reason": "\(reason)"])
        let ending = subscriptions.values
        subscriptions.removeAll()
        for record in ending { record.sink.finish(throwing: error) }
        states.update(.disconnected(reason))
    }

    // MARK: Subscriptions

    /// Sends `subscribe` and reports the subscription live (or resumed): the protocol has no subscribe acknowledgement.
    func sendSubscribe(_ id: String, on generation: Int) async {
        guard let record = subscriptions[id], record.sentOn != generation, let current = link, current.generation == generation,
            current.acked, current.end == nil
        else { return }
        subscriptions[id]?.sentOn = generation
        do {
            try await current.connection.send(.text(GraphQLOutboundMessage.subscribe(id: id, operation: record.operation)))
        } catch {
            subscriptions[id]?.sentOn = nil
            return
        }
        guard var sent = subscriptions[id] else { return }
        if let start = sent.interruptedAt {
            sent.interruptedAt = nil
            sent.sink.yield(.resumed(gap: GapWindow(start: start, end: wallClock.now())))
        } else if !sent.everLive {
            sent.sink.yield(.live)
        }
        sent.everLive = true
        subscriptions[id] = sent
    }

    private func cancelSubscription(_ id: String) async {
        guard let record = subscriptions.removeValue(forKey: id) else { return }
        if let generation = record.sentOn, let current = link, current.generation == generation, current.end == nil {
            try? await current.connection.send(.text(GraphQLOutboundMessage.complete(id: id)))
        }
        scheduleIdleClose()
    }

    /// Closes the socket once no subscription is left (after ``GraphQLTransportConfiguration/idleCloseDelay``).
    func scheduleIdleClose() {
        guard subscriptions.isEmpty, let current = link, current.end == nil else { return }
        let delay = configuration.idleCloseDelay
        let generation = current.generation
        idleTimer?.cancel()
        idleTimer = Task { [weak self, clock] in
            if delay > .zero {
                do { try await clock.sleep(for: delay, tolerance: nil) } catch { return }
            }
            await self?.closeIfStillIdle(generation)
        }
    }

    private func closeIfStillIdle(_ generation: Int) async {
        guard subscriptions.isEmpty else { return }
        await close(generation, as: .requested, code: 1000, reason: "idle")
    }
}
