import Testing

@testable import SubscriberCore

/// What `SystemNetworkPathMonitor` decides from an `NWPath`, decided in code Linux compiles: the monitor itself only
/// asks the path whether it is unsatisfied and which interface kinds it uses.
@Suite("NetworkPath from a system monitor's report")
struct NetworkPathTests {
    @Test("an unsatisfied path is unsatisfied, whatever interfaces it names")
    func unsatisfied() {
        #expect(NetworkPath.reported(unsatisfied: true) { _ in true } == .unsatisfied)
    }

    @Test(
        "a satisfied path takes the first interface it uses, in the order Wi-Fi, cellular, wired, loopback, else other",
        arguments: [
            ([.wifi, .cellular], .wifi),
            ([.cellular, .wired], .cellular),
            ([.wired, .loopback], .wired),
            ([.loopback], .loopback),
            ([.other], .other),
            ([], .other),
        ] as [([NetworkPath.Interface], NetworkPath.Interface)])
    func interfacePrecedence(uses: [NetworkPath.Interface], expected: NetworkPath.Interface) {
        #expect(NetworkPath.reported(unsatisfied: false) { uses.contains($0) } == .satisfied(expected))
    }

    @Test("a satisfied path keeps its gateways sorted and once each; an unsatisfied one has none")
    func gateways() {
        let path = NetworkPath.reported(unsatisfied: false, gateways: ["192.168.1.1:0", "fe80::1%en0", "192.168.1.1:0"]) {
            $0 == .wifi
        }
        #expect(path.gateways == ["192.168.1.1:0", "fe80::1%en0"])
        #expect(NetworkPath.reported(unsatisfied: true, gateways: ["192.168.1.1:0"]) { _ in true }.gateways.isEmpty)
        #expect(path.description == "satisfied(wifi)", "no address in a log line")
    }

    @Test("another network: another interface, or the same one through other gateways (another Wi-Fi network)")
    func anotherNetwork() {
        let home = NetworkPath.satisfied(.wifi, gateways: ["192.168.1.1:0"])
        let office = NetworkPath.satisfied(.wifi, gateways: ["10.0.0.1:0"])
        #expect(home.isAnotherNetwork(than: office))
        #expect(home.isAnotherNetwork(than: .satisfied(.cellular, gateways: ["192.168.1.1:0"])))
        #expect(home.isAnotherNetwork(than: .satisfied(.wifi)), "gateways gone: probed, a ping too many at worst")
        #expect(!home.isAnotherNetwork(than: .satisfied(.wifi, gateways: ["192.168.1.1:0"])))
        #expect(!home.isAnotherNetwork(than: .unsatisfied), "no network is not another network")
        #expect(!NetworkPath.satisfied(.wifi).isAnotherNetwork(than: .satisfied(.wifi)), "unknown gateways both times")
    }
}
