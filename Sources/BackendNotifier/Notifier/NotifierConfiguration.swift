/// Everything that tunes a ``BackendNotifier``.
public struct NotifierConfiguration: Sendable {
    /// The per-observer buffer. Default: 256 values, dropping the oldest.
    public var bufferPolicy = ObserverBufferPolicy()
    /// How long after `enterBackground()` the connection is closed (a quick app switch keeps it). Default 30 s.
    public var backgroundGrace: Duration = .seconds(30)
    /// How long `switchTransport(to:)` waits for every stream to be live on the new transport. Default 15 s.
    public var switchTimeout: Duration = .seconds(15)
    /// The AppSync namespace of the user-level channels. Default `vortex-app`.
    public var channelNamespace = "vortex-app"

    /// Creates the default configuration.
    public init() {}
}
