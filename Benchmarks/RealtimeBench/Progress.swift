import Atomics
import Foundation

/// How many events a client has counted and how many it was told were lost, readable from the watchdog while the
/// client's loop waits for the next event.
final class Progress: Sendable {
    private let received = ManagedAtomic(0)
    private let lost = ManagedAtomic(0)
    private let observerDrops = ManagedAtomic(0)

    func publish(_ count: Int) { received.store(count, ordering: .relaxed) }
    func addLost(_ count: Int) { lost.wrappingIncrement(by: count, ordering: .relaxed) }
    /// The notifier's observer-buffer drops so far (a total it counts itself, polled).
    func setObserverDrops(_ count: Int) { observerDrops.store(count, ordering: .relaxed) }

    var current: Int { received.load(ordering: .relaxed) }
    var lostCount: Int { lost.load(ordering: .relaxed) + observerDrops.load(ordering: .relaxed) }

    /// Watches a client's run. When nothing arrives for a second and received + lost covers `target`, the events
    /// still awaited were dropped: `finish()` ends the client's loop so it reports normally, losses included.
    /// When nothing arrives for `idleTimeout` seconds otherwise, the stream stalled: the process prints a partial
    /// result and exits with status 3, so the suite reports it instead of hanging.
    func watch(
        target: Int, idleTimeout: Double, label: String, window: MeasurementWindow, finish: @escaping @Sendable () -> Void
    )
        -> Task<Void, Never>
    {
        Task.detached { [self] in
            var last = -1
            var idleSince = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                let now = current
                let idle = ContinuousClock.now - idleSince
                if now != last {
                    last = now
                    idleSince = .now
                } else if now + lostCount >= target, idle > .seconds(1) {
                    finish()
                    return
                } else if idle > .seconds(idleTimeout) {
                    var result = BenchResult(label: label, received: now, window: window, stalled: true)
                    result.lost = lostCount
                    result.print()
                    exit(3)
                }
            }
        }
    }
}
