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
}
