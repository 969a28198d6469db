import Foundation
import LocalBackend
import Logging
import RealtimeTesting
import Testing

/// What both chaos suites share: the local backend with short keep-alive windows (a silent link is noticed within a
/// second) behind a fault-injecting proxy, and a seeded schedule of hard closes and silent blackholes.
struct ChaosRig {
    let server: LocalBackendServer
    let endpoints: LocalBackendEndpoints
    let proxy: FaultInjectingProxy
    let logger: Logger

    /// Starts the backend (JWTs signed with `secret`) and the proxy in front of it.
    static func start(secret: String, label: String) async throws -> ChaosRig {
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = secret
        configuration.keepAliveInterval = .milliseconds(250)
        configuration.connectionTimeoutMs = 1000
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let server = LocalBackendServer(configuration: configuration, logger: logger)
        let endpoints = try await server.start()
        let proxy = try FaultInjectingProxy(upstreamPort: try #require(URL(string: endpoints.http)?.port))
        return ChaosRig(server: server, endpoints: endpoints, proxy: proxy, logger: logger)
    }

    /// `VORTEX_CHAOS_SEED`, or a random seed; printed with how to rerun it.
    static func seed(for run: String) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["VORTEX_CHAOS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("\(run): seed \(seed) (rerun with VORTEX_CHAOS_SEED=\(seed))")
        return seed
    }
}

/// Hard closes and blackholes at seeded moments until `faultsEnd`, `spacing` milliseconds apart; a blackhole lasts 1
/// to 4 s, and ends at the latest when the faults end, so the tail is clean (a blackhole drawn late would otherwise
/// last into it, and the tail's events would be lost, in a window).
struct FaultSchedule {
    private var random: SplitMix64
    private let spacing: ClosedRange<Int>
    let faultsEnd: ContinuousClock.Instant
    private var nextFault: ContinuousClock.Instant
    private var blackholeEnds: ContinuousClock.Instant?
    /// When each fault began, and which it was (`close`, `blackhole`).
    private(set) var faults: [(Date, String)] = []

    init(seed: UInt64, from start: ContinuousClock.Instant, lasting seconds: Double, spacing: ClosedRange<Int>) {
        var random = SplitMix64(seed: seed)
        self.spacing = spacing
        faultsEnd = start + .seconds(seconds)
        nextFault = start + .milliseconds(random.next(in: spacing))
        self.random = random
    }

    /// Injects what is due at `now` through `proxy`.
    mutating func step(_ now: ContinuousClock.Instant, _ proxy: FaultInjectingProxy) {
        if let ends = blackholeEnds, now >= min(ends, faultsEnd) {
            proxy.closeAll()
            blackholeEnds = nil
        }
        guard now < faultsEnd, blackholeEnds == nil, now >= nextFault else { return }
        if random.next(in: 0...1) == 0 {
            proxy.closeAll()
            faults.append((Date(), "close"))
        } else {
            proxy.blackholeAll()
            blackholeEnds = now + .milliseconds(random.next(in: 1000...4000))
            faults.append((Date(), "blackhole"))
        }
        nextFault = now + .milliseconds(random.next(in: spacing))
    }
}
