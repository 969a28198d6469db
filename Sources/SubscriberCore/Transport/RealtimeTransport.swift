import Foundation

/// A real-time transport: one logical connection to a backend carrying many subscriptions.
///
/// Both `GraphQLTransport` (graphql-transport-ws) and `AppSyncEventsTransport` implement this, so the notifier
/// above them never knows which protocol runs underneath.
///
/// Contract:
/// - Connecting is lazy: the first ``subscribe(_:)`` or ``publish(_:)`` opens the connection.
/// - ``subscribe(_:)`` returns at once; the stream yields ``SubscriptionEvent/live`` when the server confirms,
///   then payloads, and ``SubscriptionEvent/resumed(gap:)`` after every reconnect that re-established it.
///   It ends normally after ``disconnect()`` or when the server completes it, and with a ``RealtimeError`` otherwise.
/// - Cancelling the consumer's iteration (or dropping the stream) unsubscribes on the wire.
/// - Unexpected closes reconnect per the ``ReconnectPolicy``, asking ``AuthSession`` again every time.
public protocol RealtimeTransport: Sendable {
    /// A short name for logs and connection events, for example `"appsync"` or `"graphql"`.
    var name: String { get }

    /// Which kind of ``SubscriptionRequest/Topic`` this transport understands.
    var dialect: TransportDialect { get }

    /// Starts a subscription. Invalid requests are reported by finishing the stream with a ``RealtimeError``.
    func subscribe(_ request: SubscriptionRequest) async -> AsyncThrowingStream<SubscriptionEvent, any Error>

    /// Publishes events where the transport supports it.
    ///
    /// - Throws: ``RealtimeError/unsupported(_:)`` on transports that cannot publish, or the publish failure.
    func publish(_ request: PublishRequest) async throws -> PublishResult

    /// Closes the connection with a normal close, ends every subscription stream normally and stops reconnecting.
    /// A later `subscribe` starts afresh.
    func disconnect() async

    /// A new stream of connection states. It starts with the current state; many observers may listen at once.
    func connectionStates() async -> AsyncStream<ConnectionState>

    /// Checks at once that the connection still works: every open link is probed (a WebSocket ping with the short
    /// probe timeout) and replaced if it does not answer; a transport waiting to reconnect reconnects now. Call it
    /// when the app returns to the foreground. Transports without links do nothing.
    func verifyConnection() async

    /// Why the latest connection was lost or could not be made, since the transport was last connected: the link's
    /// end and the close or transport failure (a refused upgrade, a certificate the device does not trust, a close
    /// code). `nil` while connected, and before any connection failed. Read it when ``connectionStates()`` reports
    /// `reconnecting` to say why; it never holds a credential.
    var lastConnectionFailure: String? { get }

    /// When the latest acknowledged connection was lost: the wall-clock time of the last frame it received (the
    /// outage's start, which failed attempts after it do not move). `nil` while connected, and before any
    /// acknowledged connection was lost. A notifier that switches away from a transport that is down starts the
    /// switch's window here, so what the outage missed before the switch is in it.
    var connectionLostAt: Date? { get }
}

extension RealtimeTransport {
    /// The default does nothing.
    public func verifyConnection() async {}

    /// The default knows of no failure.
    public var lastConnectionFailure: String? { nil }

    /// The default knows of no loss.
    public var connectionLostAt: Date? { nil }
}

/// The subscription vocabulary a transport speaks.
public enum TransportDialect: String, Sendable, Equatable, CaseIterable {
    /// AppSync Events channels (``SubscriptionRequest/Topic/channel(_:)``).
    case appSyncChannels = "appsync"
    /// GraphQL operations (``SubscriptionRequest/Topic/graphQL(_:)``).
    case graphQL = "graphql"
}
