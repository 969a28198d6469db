/// The device's network path as a ``NetworkPathMonitor`` reports it: whether it can reach the network, over which
/// kind of interface, and through which gateways.
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
    /// The gateways of a satisfied path's interfaces (their addresses as the system gives them, sorted), empty when
    /// unsatisfied or unknown. Moving from one Wi-Fi network to another keeps ``interface`` and changes these: the old
    /// socket is then as dead as after a Wi-Fi ↔ cellular swap.
    public var gateways: [String]

    /// Creates a path (`gateways` are kept sorted and without repeats; an unsatisfied path has none).
    public init(status: Status, interface: Interface?, gateways: [String] = []) {
        self.status = status
        self.interface = status == .satisfied ? interface : nil
        self.gateways = status == .satisfied ? Array(Set(gateways)).sorted() : []
    }

    /// A usable path over `interface`, through `gateways` (if known).
    public static func satisfied(_ interface: Interface, gateways: [String] = []) -> NetworkPath {
        NetworkPath(status: .satisfied, interface: interface, gateways: gateways)
    }

    /// No usable path.
    public static let unsatisfied = NetworkPath(status: .unsatisfied, interface: nil)

    /// Whether the path can carry traffic.
    public var isSatisfied: Bool { status == .satisfied }

    /// The path a system monitor reports, decided here where Linux compiles and tests it (``SystemNetworkPathMonitor``
    /// only asks `NWPath`): unsatisfied, or satisfied over the first kind of interface `uses` confirms, in the order
    /// Wi-Fi, cellular, wired, loopback, else other, through `gateways`. A path that "requires a connection" counts as
    /// satisfied: a new connection may bring it up (cellular, a VPN on demand), so reconnect attempts are worth making.
    package static func reported(unsatisfied: Bool, gateways: [String] = [], uses: (Interface) -> Bool) -> NetworkPath {
        guard !unsatisfied else { return .unsatisfied }
        return .satisfied([Interface.wifi, .cellular, .wired, .loopback].first(where: uses) ?? .other, gateways: gateways)
    }

    /// Whether `other` is another network than this one, both satisfied: another kind of interface, or other gateways
    /// (another Wi-Fi network). Gateways that appear or go count too: a probe too many costs a ping, one too few a
    /// dead link until the keep-alive finds it.
    package func isAnotherNetwork(than other: NetworkPath) -> Bool {
        isSatisfied && other.isSatisfied && (interface != other.interface || gateways != other.gateways)
    }

    /// `satisfied(wifi)`, `unsatisfied`: the gateways' addresses are left out of logs.
    /// `satisfied(wifi)`, `unsatisfied`: the gateways' addresses stay out of log lines.
    public var description: String { interface.map { "\(status.rawValue)(\($0.rawValue))" } ?? status.rawValue }
}
