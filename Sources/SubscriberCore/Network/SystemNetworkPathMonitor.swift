#if canImport(Network)
import Dispatch
import Network

/// The ``NetworkPathMonitor`` of Apple platforms: an `NWPathMonitor` (Network framework) reporting each path it sees
/// as a ``NetworkPath`` — satisfied or not, the interface it uses (Wi-Fi, cellular, wired, loopback, other) and its
/// gateways (`NWPath.gateways`, iOS 13 and macOS 10.15 on).
///
/// Deliberately small: the monitor starts on a queue of its own when created and is cancelled when released; every
/// update goes through a ``DrivenNetworkPathMonitor``, which holds the current path and the consumers' streams. (It
/// cannot be compiled on Linux, where this package is built and tested; the logic it feeds is tested through the
/// driven monitor.)
public final class SystemNetworkPathMonitor: NetworkPathMonitor, @unchecked Sendable {
    // `@unchecked`: `NWPathMonitor` is thread-safe (its handler runs on `queue`), and both properties are `let`s.
    private let monitor = NWPathMonitor()
    private let relay = DrivenNetworkPathMonitor(nil)

    /// Starts monitoring at once.
    public init() {
        let relay = relay
        monitor.pathUpdateHandler = { path in relay.update(Self.networkPath(path)) }
        monitor.start(queue: DispatchQueue(label: "vortex.network-path"))
    }

    deinit {
        monitor.cancel()
        relay.finish()
    }

    /// A new stream starting with the current path (as soon as the monitor reported one).
    public func paths() -> AsyncStream<NetworkPath> { relay.paths() }

    /// `NWPath` → ``NetworkPath`` (``NetworkPath/reported(unsatisfied:uses:)`` decides).
    static func networkPath(_ path: NWPath) -> NetworkPath {
        .reported(unsatisfied: path.status == .unsatisfied, gateways: path.gateways.map { "\($0)" }) {
            path.usesInterfaceType(interfaceType($0))
        }
    }

    private static func interfaceType(_ interface: NetworkPath.Interface) -> NWInterface.InterfaceType {
        switch interface {
        case .wifi: .wifi
        case .cellular: .cellular
        case .wired: .wiredEthernet
        case .loopback: .loopback
        case .other: .other
        }
    }
}
#endif
