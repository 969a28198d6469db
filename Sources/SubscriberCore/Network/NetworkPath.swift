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

    public var description: String { interface.map { "\(status.rawValue)(\($0.rawValue))" } ?? status.rawValue }
}
