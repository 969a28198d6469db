/// A ``NetworkPathMonitor`` the app (or a test) drives by calling ``update(_:)``: for platforms without
/// `NWPathMonitor` (Linux), for apps that already observe the network their own way, and for tests.
public final class DrivenNetworkPathMonitor: NetworkPathMonitor {
    private let broadcaster: StateBroadcaster<NetworkPath>

    /// Creates a monitor whose current path is `initial` (`nil`: unknown until the first ``update(_:)``).
    public init(_ initial: NetworkPath? = .satisfied(.other)) {
        broadcaster = StateBroadcaster(initial, keepingNewest: 8)
    }

    /// The latest path, if one is known.
    public var current: NetworkPath? { broadcaster.current }

    /// Reports a path to every stream. A path equal to the current one is not repeated.
    public func update(_ path: NetworkPath) { broadcaster.update(path) }

    /// A new stream that starts with the current path (if known). A consumer that falls behind keeps the newest 8.
    /// After ``finish()``, the stream gives the last path (if known) and ends.
    public func paths() -> AsyncStream<NetworkPath> { broadcaster.makeStream() }

    /// Ends every stream, now and later (the monitor is going away).
    public func finish() { broadcaster.finish() }
}
