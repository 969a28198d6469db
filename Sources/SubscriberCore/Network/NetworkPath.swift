/// The device's network path as a ``NetworkPathMonitor`` reports it: whether it can reach the network, and over which
/// kind of interface.
public struct NetworkPath: Sendable, Equatable, CustomStringConvertible {
    /// Whether the path can carry traffic.
    public enum Status: String, Sendable, Equatable {
        /// The network is reachable.
        case satisfied
        /// No route to the network (airplane mode, out of coverage, Wi-Fi off and no cellular).
        case unsatisfied
    }

    /// The kind of interface traffic leaves through.
    public enum Interface: String, Sendable, Equatable {
        /// Wi-Fi.
        case wifi
        /// Cellular data.
        case cellular
        /// Wired Ethernet.
        case wired
        /// The loopback interface.
        case loopback
        /// Anything else (a VPN or other virtual interface, or unknown).
        case other
    }

    /// Whether the path can carry traffic.
    public var status: Status
    /// The interface in use; `nil` when the path is unsatisfied.
    public var interface: Interface?

    /// Creates a path.
    public init(status: Status, interface: Interface?) {
        self.status = status
        self.interface = status == .satisfied ? interface : nil
    }

    /// A usable path over `interface`.
    public static func satisfied(_ interface: Interface) -> NetworkPath { NetworkPath(status: .satisfied, interface: interface) }

    /// No usable path.
    public static let unsatisfied = NetworkPath(status: .unsatisfied, interface: nil)

    /// Whether the path can carry traffic.
    public var isSatisfied: Bool { status == .satisfied }

    /// The path a system monitor reports, decided here where Linux compiles and tests it (``SystemNetworkPathMonitor``
    /// only asks `NWPath`): unsatisfied, or satisfied over the first kind of interface `uses` confirms, in the order
    /// Wi-Fi, cellular, wired, loopback, else other. A path that "requires a connection" counts as satisfied: a new
    /// connection may bring it up (cellular, a VPN on demand), so reconnect attempts are worth making.
    package static func reported(unsatisfied: Bool, uses: (Interface) -> Bool) -> NetworkPath {
        guard !unsatisfied else { return .unsatisfied }
        return .satisfied([Interface.wifi, .cellular, .wired, .loopback].first(where: uses) ?? .other)
    }

    public var description: String { interface.map { "\(status.rawValue)(\($0.rawValue))" } ?? status.rawValue }
}
