import ArgumentParser

/// A lifecycle event, as the benchmark plays it through the proxy and the drivable network path monitor.
enum Scenario: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// The link goes silent in both directions (a dead NAT mapping, a blackholed route): found by the liveness check.
    case blackhole
    /// AppSync's worst case: the link is blackholed once it has learned the `ka` interval, 31.5 s before the next `ka`
    /// is due, so its ping (due 30 s after the last frame) falls within `keepAliveGrace` of that `ka` and waits until
    /// 2 s after it. AppSync only.
    case blackholeBeforeKeepAlive = "blackhole-before-ka"
    /// The connection is reset (both directions shut down at once).
    case hardClose = "hard-close"
    /// The network goes away (the path is unsatisfied and the socket is reset) and comes back 5 s later; times count
    /// from the return.
    case networkReturn = "network-return"
    /// The interface changes (Wi-Fi → cellular) and the old socket is left silent: found by the probe.
    case interfaceSwitch = "interface-switch"
    /// The app returns to the foreground after the link died silently while it was suspended: `verifyConnection()`
    /// (what `BackendNotifier.enterForeground()` calls); times count from the call.
    case foreground

    /// What the table calls it.
    var title: String {
        switch self {
        case .blackhole: "blackholed link"
        case .blackholeBeforeKeepAlive: "blackholed 31.5 s before a `ka` is due (the ping waits for it)"
        case .hardClose: "hard close"
        case .networkReturn: "network loss, return after 5 s (from the return)"
        case .interfaceSwitch: "interface switch, old socket silent"
        case .foreground: "foreground after a silent death (verifyConnection)"
        }
    }

    /// Whether the scenario means anything on `transport` (only AppSync has `ka`s).
    func applies(to transport: TransportKind) -> Bool {
        self != .blackholeBeforeKeepAlive || transport == .appsync
    }
}
