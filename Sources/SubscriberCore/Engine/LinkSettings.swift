/// What every link of a transport is tuned by, whichever its protocol: one struct held by both transports'
/// configurations (`AppSyncEventsConfiguration.link`, `GraphQLTransportConfiguration.link`), so the two never copy
/// these fields. What only one protocol has (AppSync's rotation and publish route, GraphQL's live confirmation window
/// and `connection_init` payload) stays on its own configuration.
public struct LinkSettings: Sendable, Equatable {
    /// Delays between reconnect attempts. Default: full-jitter exponential backoff from 1 s, capped at 10 s, unlimited
    /// (``ReconnectPolicy/default``).
    public var reconnectPolicy: ReconnectPolicy
    /// How long the ``AuthSession``'s credentials, the WebSocket upgrade, and then `connection_ack` may each take; on
    /// expiry the attempt is dropped and the transport retries per ``reconnectPolicy``. Default 15 s.
    public var ackTimeout: Duration
    /// Pings after a quiet period, pong and probe timeouts. Default: ``LivenessSettings/default`` (30 s, 10 s, 3 s).
    public var liveness: LivenessSettings
    /// How far before the last frame of a lost connection a reported gap starts. Covers clock skew between the
    /// backend's event timestamps and the device, and events in flight when the link died. Default 2 s.
    public var gapSafetyMargin: Duration
    /// Events buffered per subscription for a slow consumer before the newest are dropped; every drop is reported in
    /// the stream as `SubscriptionEvent/lost(_:)`. Default 1024.
    public var subscriptionBufferLimit: Int

    /// Creates settings; every argument has the default documented on its property.
    public init(
        reconnectPolicy: ReconnectPolicy = .default, ackTimeout: Duration = .seconds(15), liveness: LivenessSettings = .default,
        gapSafetyMargin: Duration = .seconds(2), subscriptionBufferLimit: Int = 1024
    ) {
        self.reconnectPolicy = reconnectPolicy
        self.ackTimeout = ackTimeout
        self.liveness = liveness
        self.gapSafetyMargin = gapSafetyMargin
        self.subscriptionBufferLimit = subscriptionBufferLimit
    }

    /// The defaults.
    public static let `default` = LinkSettings()
}
