import AppSyncEventsWire
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
///
/// Connections run on the shared engine (`TransportEngine`, `LinkSupervisor`, `LinkRunner`): each link is one
/// structured scope; frames are handled on the reading task and yielded straight into the subscription streams. The
/// transport's state is the engine's and the session's locks: a `Sendable` class with no isolation of its own.
public final class AppSyncEventsTransport: RealtimeTransport {
    /// `"appsync"`.
    public let name = "appsync"
    /// AppSync Events channels.
    public let dialect = TransportDialect.appSyncChannels

    let configuration: AppSyncEventsConfiguration
    let auth: any AuthSession
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let makeID: @Sendable () -> String
    let httpPublisher: AppSyncHTTPPublisher
    let engine: TransportEngine<AppSyncState>

    /// Creates a transport. Nothing connects until the first subscribe or publish.
    /// - Parameters:
    ///   - configuration: endpoint, timeouts, policies.
    ///   - auth: asked for sign-in state and credentials before every connection attempt and for every batch of
    ///     subscribes and publishes (so it should cache; see `JWTTokenCache`).
    ///   - connector: the WebSocket implementation: `URLSessionWebSocketConnector()` (module `WebSocketURLSession`,
    ///     Apple platforms) or `NIOWebSocketConnector()` (module `WebSocketNIO`); Composition's
    ///     `TransportFactory.platformConnector` picks the platform's.
    ///   - httpClient: the HTTP implementation for `POST /event` (default: URLSession).
    ///   - pathMonitor: the device's network path: no reconnect attempts without a network, an immediate one when it
    ///     returns, a probe of the link when the interface changes. `nil` (the default): none. Composition passes the
    ///     platform's monitor.
    ///   - clock: runs every timer; inject a manual clock in tests.
    ///   - wallClock: timestamps gap windows.
    ///   - logger: never receives tokens, keys or signatures.
    ///   - makeID: subscription and publish ids (UUIDs by default).
    public init(
        configuration: AppSyncEventsConfiguration,
        auth: any AuthSession,
        connector: any WebSocketConnector,
        httpClient: any HTTPClient = URLSessionHTTPClient(),
        pathMonitor: (any NetworkPathMonitor)? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system,
        logger: Logger = Logger(label: "vortex.appsync"),
        makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) {
        self.configuration = configuration
        self.auth = auth
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.makeID = makeID
        self.httpPublisher = AppSyncHTTPPublisher(endpoint: configuration.endpoint, client: httpClient)
        // The successor link opens this long after each acknowledgement: before the service's maximum duration.
        var rotateAfter: Duration?
        if let maxDuration = configuration.maxConnectionDuration {
            let lead = maxDuration - configuration.rotationLead
            rotateAfter = lead > .zero ? lead : maxDuration / 2
        }
        self.engine = TransportEngine(
            clock: clock, settings: configuration.link, rotateAfter: rotateAfter, auth: auth, connector: connector,
            pathMonitor: pathMonitor, wallClock: wallClock, logger: logger)
    }

    // MARK: RealtimeTransport

    /// Subscribes to an AppSync Events channel (wildcards allowed as a final `/*`). The `subscribe` is authorized with
    /// credentials asked for when it is sent (again at every reconnect). Refused as unauthorized, it is sent once more
    /// with refreshed credentials; refused again, only this stream ends, with
    /// `RealtimeError/subscriptionRejected(errorType:message:)` naming the channel: the connection and every other
    /// subscription on it carry on.
    public func subscribe(_ request: SubscriptionRequest) async -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        await subscribeInBatches(request).elements
    }

    /// ``subscribe(_:)``, read a batch at a time.
    package func subscribeInBatches(_ request: SubscriptionRequest) async -> BatchReader<SubscriptionEvent> {
        guard case .channel(let rawChannel) = request.topic else {
            return .failed(.unsupported("AppSync Events subscribes to channels, not GraphQL operations"))
        }
        let channel: String
        do { channel = try ChannelName.validate(rawChannel, for: .subscribe) } catch { return .failed(error) }
        let id = makeID()
        return engine.withRunning(makeState) { state in
            guard state.values.withLock({ $0.subscriptions.count }) < configuration.maxSubscriptions else {
                return .failed(.subscriptionLimitReached(configuration.maxSubscriptions))
            }
            let (reader, sink) = engine.openSubscription(
                id, in: state, label: channel, settings: configuration.link, wallClock: wallClock, logger: logger)
            logger.debug("subscribe", metadata: ["channel": "\(channel)", "id": "\(id)"])
            state.add(id: id, channel: channel, sink: sink)
            return reader
        }
    }

    /// Publishes 1 to 5 events (each at most 240 KB of JSON) to a channel, over the configured route, authorized with
    /// credentials asked for now. Refused as unauthorized, it is sent once more with refreshed credentials; refused
    /// again, it throws `RealtimeError/publishRejected(errorType:message:)` naming the channel. A WebSocket publish
    /// shares the subscriptions' connection, which a refusal never closes.
    ///
    /// Over HTTP, each request for credentials waits at most the configuration's `link.ackTimeout` on the transport's
    /// clock (as a WebSocket batch does): an `AuthSession` silent that long makes it throw `RealtimeError/network(_:)`
    /// ("the AuthSession gave no credentials within …") without posting anything. Cancelling the calling task throws
    /// `CancellationError` at once, even while the session hangs.
    public func publish(_ request: PublishRequest) async throws -> PublishResult {
        let channel = try ChannelName.validate(request.channel, for: .publish)
        try AppSyncPublishLimits.validate(request.events)
        switch configuration.publishRoute {
        case .http:
            return try await httpPublisher.publish(
                channel: channel, events: request.events, auth: auth, wallClock: wallClock,
                credentialsTimeout: configuration.link.ackTimeout, clock: clock)
        case .webSocket:
            return try await publishOverWebSocket(channel: channel, events: request.events)
        }
    }

    /// Closes every connection normally, ends all subscription streams normally and stops reconnecting. Returns once
    /// every connection of this transport is gone. A later `subscribe` starts afresh. (Dropped without it, the
    /// transport ends the same way without waiting: no connection outlives its last reference.)
    public func disconnect() async { await engine.disconnect() }

    /// A new stream of connection states, starting with the current one.
    public func connectionStates() async -> AsyncStream<ConnectionState> { engine.states.makeStream() }

    /// Probes every open connection at once (a WebSocket ping with ``LivenessSettings/probeTimeout``) and replaces
    /// one that does not answer; while waiting to reconnect, reconnects now. Call it when the app returns to the
    /// foreground. Without a connection it does nothing.
    public func verifyConnection() async { engine.verifyConnection() }

    /// Why the latest connection was lost or could not be made since the transport was last connected (`nil` while
    /// connected): the link's end and its close, as the transport's log line "connection ended" gives them.
    public var lastConnectionFailure: String? { engine.lastConnectionFailure }

    /// When the latest acknowledged connection was lost (its last frame received); `nil` while connected.
    public var connectionLostAt: Date? { engine.connectionLostAt }

    /// The subscriptions currently held (live or waiting), for diagnostics.
    public var subscriptionCount: Int {
        get async { engine.session?.values.withLock { $0.subscriptions.count } ?? 0 }
    }

    // MARK: The engine

    /// A new run's state, asking its supervisor through `requests` (the engine starts one on first use, and again
    /// after a stop or a disconnect).
    private func makeState(_ requests: AsyncStream<SupervisorRequest>.Continuation) -> (AppSyncState, any SupervisedTransport) {
        let state = AppSyncState(
            auth: auth, endpoint: configuration.endpoint, wallClock: wallClock, margin: configuration.link.gapSafetyMargin,
            rotationTimeout: configuration.rotationTimeout, credentialsTimeout: configuration.link.ackTimeout, clock: clock,
            states: engine.states, requests: requests, logger: logger)
        return (state, AppSyncLinks(state: state, configuration: configuration, wallClock: wallClock, logger: logger))
    }

    /// Sends a `publish` on the primary link (connecting first if needed) and waits for the reply.
    private func publishOverWebSocket(channel: String, events: [String]) async throws -> PublishResult {
        let id = makeID()
        let reply = OneShotSignal<Result<PublishResult, RealtimeError>>()
        // Added as one step with respect to a stop, which then fails it with its own error.
        let state = engine.withRunning(makeState) { state in
            state.addPublish(id: id, channel: channel, events: events, reply: reply)
            return state
        }
        let timeout = configuration.publishTimeout
        let clock = clock
        let result = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                guard (try? await clock.sleep(for: timeout, tolerance: nil)) != nil else { return }
                state.completePublish(id, .failure(.network("no publish_success within \(timeout)")))
            }
            let result = await reply.wait()
            group.cancelAll()
            return result
        }
        guard let result else {
            state.completePublish(id, .failure(.disconnected))
            throw CancellationError()
        }
        return try result.get()
    }
}

/// The supervisor's view of an AppSync transport.
struct AppSyncLinks: SessionSupervisedTransport {
    let state: AppSyncState
    let configuration: AppSyncEventsConfiguration
    let wallClock: WallClock
    let logger: Logger

    func makeLink(id: Int, credentials: AuthCredentials, role: LinkRole) -> (WebSocketRequest, any LinkDriver) {
        // These credentials authorize the connection only; every subscribe and publish on it asks for its own.
        let authorizer = AppSyncAuthorizer(
            endpoint: configuration.endpoint, credentials: credentials, now: { [wallClock] in wallClock.now() })
        state.linkCreated(id)
        let request = WebSocketRequest(
            url: configuration.endpoint.realtimeURL, subprotocols: authorizer.subprotocols(), requiredSubprotocol: AppSyncSubprotocol.name)
        let driver = AppSyncLinkDriver(id: id, state: state, defaultKeepAliveTimeout: configuration.defaultKeepAliveTimeout, logger: logger)
        return (request, driver)
    }
}

extension AppSyncEventsTransport: BatchSubscribing {}
