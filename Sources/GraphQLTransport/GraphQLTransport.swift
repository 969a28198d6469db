import Foundation
import Logging
import SubscriberCore

/// A graphql-transport-ws client: lazy connect, `connection_init` with credentials fetched anew for every attempt,
/// ack timeout, pings after a quiet period with a pong timeout (WebSocket pings, or the protocol's `ping` where the
/// server ignores those; on by default), the reference client's close-code policy, reconnect
/// with resubscribe under the same ids, and `resumed(gap:)` after every reconnect — the rollback path, as robust as
/// the AppSync one.
///
/// When a subscription counts as **live**: graphql-transport-ws has no subscribe acknowledgement, so the stream yields
/// `SubscriptionEvent/live` on the first `next`, or once ``GraphQLTransportConfiguration/liveConfirmationWindow`` has
/// passed after `subscribe` without an `error`. A server that rejects the operation answers with `error`, which ends
/// the stream with `RealtimeError/graphQLErrors(_:)` — before it was ever reported live, when it comes in the window.
///
/// Connections run on the shared engine (`TransportEngine`): the transport's state is the engine's and the session's
/// locks, so it is a `Sendable` class with no isolation of its own.
public final class GraphQLTransport: RealtimeTransport {
    /// `"graphql"`.
    public let name = "graphql"
    /// GraphQL operations.
    public let dialect = TransportDialect.graphQL
    /// The WebSocket subprotocol.
    public static let subprotocol = "graphql-transport-ws"

    let configuration: GraphQLTransportConfiguration
    let auth: any AuthSession
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger
    let makeID: @Sendable () -> String
    let engine: TransportEngine<GraphQLState>

    /// Creates a transport. Nothing connects until the first subscribe.
    ///
    /// `connector` is the WebSocket implementation: `URLSessionWebSocketConnector()` (module `WebSocketURLSession`,
    /// Apple platforms) or `NIOWebSocketConnector()` (module `WebSocketNIO`); Composition's
    /// `TransportFactory.platformConnector` picks the platform's. `pathMonitor`
    /// reports the device's network path (no reconnect attempts without a network, an immediate one when it returns,
    /// a probe of the link when the interface changes); `nil` (the default): none. Composition passes the platform's.
    public init(
        configuration: GraphQLTransportConfiguration,
        auth: any AuthSession,
        connector: any WebSocketConnector,
        pathMonitor: (any NetworkPathMonitor)? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system,
        logger: Logger = Logger(label: "vortex.graphql"),
        makeID: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) {
        self.configuration = configuration
        self.auth = auth
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.makeID = makeID
        self.engine = TransportEngine(
            clock: clock, settings: configuration.link, auth: auth, connector: connector, pathMonitor: pathMonitor,
            wallClock: wallClock, logger: logger)
    }

    // MARK: RealtimeTransport

    /// Starts a GraphQL subscription.
    public func subscribe(_ request: SubscriptionRequest) async -> AsyncThrowingStream<SubscriptionEvent, any Error> {
        await subscribeInBatches(request).elements
    }

    /// ``subscribe(_:)``, read a batch at a time.
    package func subscribeInBatches(_ request: SubscriptionRequest) async -> BatchReader<SubscriptionEvent> {
        guard case .graphQL(let operation) = request.topic else {
            return .failed(.unsupported("GraphQL subscribes to operations, not AppSync channels"))
        }
        let id = makeID()
        return engine.withRunning(makeState) { state in
            let (reader, sink) = engine.openSubscription(
                id, in: state, label: operation.operationName ?? String(operation.query.prefix(60)), settings: configuration.link,
                wallClock: wallClock, logger: logger)
            state.add(id: id, operation: operation, sink: sink)
            return reader
        }
    }

    /// graphql-transport-ws has no publish: always throws `RealtimeError/unsupported(_:)`.
    public func publish(_ request: PublishRequest) async throws -> PublishResult {
        throw RealtimeError.unsupported("the GraphQL transport cannot publish; publish through the backend")
    }

    /// Closes with 1000, ends every stream normally and stops reconnecting; returns once the connection is gone.
    /// (Dropped without it, the transport ends the same way without waiting: no connection outlives it.)
    public func disconnect() async { await engine.disconnect() }

    /// A new stream of connection states, starting with the current one.
    public func connectionStates() async -> AsyncStream<ConnectionState> { engine.states.makeStream() }

    /// Probes the open connection at once (a WebSocket ping, or the protocol's `ping` where the server ignores those,
    /// with ``LivenessSettings/probeTimeout``) and replaces it if it does not answer; while waiting to reconnect,
    /// reconnects now. Call it when the app returns to the foreground. Without a connection it does nothing.
    public func verifyConnection() async { engine.verifyConnection() }

    /// Why the latest connection was lost or could not be made since the transport was last connected (`nil` while
    /// connected): the link's end and its close, as the transport's log line "connection ended" gives them.
    public var lastConnectionFailure: String? { engine.lastConnectionFailure }

    /// When the latest acknowledged connection was lost (its last frame received); `nil` while connected.
    public var connectionLostAt: Date? { engine.connectionLostAt }

    // MARK: The engine

    /// A new run's state, asking its supervisor through `requests`.
    func makeState(_ requests: AsyncStream<SupervisorRequest>.Continuation) -> (GraphQLState, any SupervisedTransport) {
        let state = GraphQLState(
            configuration: configuration, auth: auth, clock: clock, wallClock: wallClock, states: engine.states, requests: requests,
            logger: logger)
        return (state, GraphQLLinks(state: state, configuration: configuration, logger: logger))
    }
}

/// The supervisor's view of a GraphQL transport.
struct GraphQLLinks: SessionSupervisedTransport {
    let state: GraphQLState
    let configuration: GraphQLTransportConfiguration
    let logger: Logger

    func makeLink(id: Int, credentials: AuthCredentials, role: LinkRole) -> (WebSocketRequest, any LinkDriver) {
        let request = WebSocketRequest(
            url: configuration.url, subprotocols: [GraphQLTransport.subprotocol], requiredSubprotocol: GraphQLTransport.subprotocol)
        let driver = GraphQLLinkDriver(
            id: id, state: state, connectionPayload: configuration.connectionPayload(credentials), logger: logger)
        return (request, driver)
    }
}

extension GraphQLTransport: BatchSubscribing {}
