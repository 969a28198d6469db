import SubscriberCore

/// The notifier's running upstream pumps and its switches' overlaps: where each run's events go, and how a switch
/// hands them from the old transport's runs to the new one's.
struct UpstreamRuns {
    /// A running upstream: its pump's task and where its events go.
    struct Pump {
        let task: ScopedTask
        let delivery: UpstreamDelivery
    }

    private var pumps: [NotifierStateMachine.RunID: Pump] = [:]
    /// Each switch's overlap, per upstream, until the machine ends it.
    private var overlaps: [Int: [Upstream: SwitchOverlap]] = [:]

    mutating func add(_ run: NotifierStateMachine.RunID, _ pump: Pump) { pumps[run] = pump }

    /// Stops delivering the run's events, then cancels its pump (so nothing it still had in hand is delivered).
    mutating func stop(_ run: NotifierStateMachine.RunID) {
        guard let pump = pumps.removeValue(forKey: run) else { return }
        pump.delivery.close()
        pump.task.cancel()
    }

    /// Switch `change` overlaps `upstream`: the old run (if any) records what it delivers from now on.
    mutating func beginOverlap(_ change: Int, _ overlap: SwitchOverlap, old: NotifierStateMachine.RunID?) {
        overlaps[change, default: [:]][overlap.upstream] = overlap
        if let old, let pump = pumps[old] { pump.delivery.set(.old(overlap)) }
    }

    /// Where a new run of switch `change` holds its events.
    func overlap(_ change: Int, _ upstream: Upstream) -> SwitchOverlap? { overlaps[change]?[upstream] }

    /// Every overlap of switch `change` cuts over.
    func cutOver(_ change: Int) {
        for overlap in overlaps[change].map({ Array($0.values) }) ?? [] { overlap.cutOver() }
    }

    /// The overlap of switch `change` is over: every run still in it delivers directly again.
    mutating func endOverlap(_ change: Int) {
        for overlap in overlaps.removeValue(forKey: change).map({ Array($0.values) }) ?? [] {
            overlap.end()
            for pump in pumps.values { pump.delivery.reopen(after: overlap) }
        }
    }
}
