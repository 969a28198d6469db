import AppSyncEventsWire
import SubscriberCore

/// Everything that tunes an ``AppSyncEventsTransport``.
public struct AppSyncEventsConfiguration: Sendable {
    /// The most subscriptions the service allows on one connection.
    public static let serviceSubscriptionLimit = AppSyncConnectionLimits.maxSubscriptions

    /// The API's endpoint.
    public var endpoint: AppSyncEndpoint
    /// What both transports' links share: reconnect policy, acknowledgement timeout, liveness (shared with the GraphQL
    /// transport; where the service does not answer WebSocket pings, the `ka` watchdog with the learned interval takes
    /// over, never later than `connectionTimeoutMs`), gap safety margin and subscription buffer limit.
    public var link = LinkSettings()
    /// Keep-alive window when `connection_ack` carries no usable `connectionTimeoutMs`. Default 300 s (the service's).
    /// A link silent for the window is aborted at once and replaced.
    public var defaultKeepAliveTimeout: Duration = .milliseconds(300_000)
    /// The longest a connection may live before it is replaced without a gap; `nil` never rotates. Default 24 h.
    public var maxConnectionDuration: Duration? = .seconds(24 * 3600)
    /// How long before ``maxConnectionDuration`` the replacement connection is opened. Default 5 min.
    public var rotationLead: Duration = .seconds(300)
    /// How long a rotation may take to get every subscription live on the new connection. Default 30 s.
    public var rotationTimeout: Duration = .seconds(30)
    /// How long a WebSocket publish waits for `publish_success`. Default 15 s.
    public var publishTimeout: Duration = .seconds(15)
    /// Subscriptions allowed on the connection; the next one fails with `RealtimeError/subscriptionLimitReached(_:)`.
    public var maxSubscriptions: Int = AppSyncEventsConfiguration.serviceSubscriptionLimit
    /// Where ``AppSyncEventsTransport/publish(_:)`` sends events.
    public var publishRoute: PublishRoute = .webSocket

    /// Where publishes go.
    public enum PublishRoute: String, Sendable, CaseIterable {
        /// Over the WebSocket (`publish` message).
        case webSocket = "websocket"
        /// Over HTTP `POST /event`.
        case http
    }

    /// Creates a configuration with defaults for everything but the endpoint.
    public init(endpoint: AppSyncEndpoint) { self.endpoint = endpoint }
}
