import SubscriberCore

/// Everything that tunes a ``BackendNotifier``.
public struct NotifierConfiguration: Sendable {
    /// The per-observer buffer. Default: 1024 values, dropping the oldest. `RealtimeConfiguration.bufferLimit` sets
    /// this and the transports' per-subscription buffers to the same limit.
    public var bufferPolicy = ObserverBufferPolicy()
    /// How long after `enterBackground()` the connection is closed (a quick app switch keeps it). Default 30 s.
    public var backgroundGrace: Duration = .seconds(30)
    /// How long `switchTransport(to:)` waits for every stream to be live on the new transport. Default 15 s.
    public var switchTimeout: Duration = .seconds(15)
    /// How long the notifier may be without a live connection (connecting, reconnecting or offline while signed in
    /// and in the foreground) before it reports ``NotifierConnectionEvent/networkError(_:)``. Default 60 s.
    public var networkErrorAfter: Duration = .seconds(60)
    /// How long the old transport goes on delivering once every stream of a planned switch is live on the new one, so
    /// events already on their way over the old link still arrive (those both deliver are delivered once). Default
    /// 0.5 s.
    public var switchSettle: Duration = .milliseconds(500)
    /// How far back a loss the notifier itself detects (a full buffer, an event that cannot be decoded) and the window
    /// of a failover switch reach: events published that long before may still have been on their way. It also bounds
    /// how long after a switch's cut-over the new transport's events are checked against what the old one delivered.
    /// Default 2 s, the transports' default `gapSafetyMargin`; a negative margin counts as none.
    public var lossMargin: Duration = .seconds(2)

    /// ``lossMargin``, never negative (a window must not end before it starts).
    var validLossMargin: Duration { max(.zero, lossMargin) }
    /// The AppSync namespace of the user-level channels. Default `vortex-app`.
    public var channelNamespace = "vortex-app"
    /// The GraphQL operation to run for an upstream instead of the default document (``LegacyGraphQLDocuments``), for
    /// a legacy server whose schema differs. The notifier supplies the variables `userId`, `orgId` and
    /// `organizationId` that the operation declares; check the documents with `vortex-realtime preflight`.
    public var graphQLOperations: [NotifierUpstream: GraphQLOperation] = [:]

    /// Creates the default configuration.
    public init() {}
}
