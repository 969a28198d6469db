import Foundation
import Synchronization

/// How many events a client has counted, readable from the watchdog while the client's loop runs.
final class Progress: Sendable {
    private let received = Atomic(0)

    /// Published every 256 events (and at the end), so the hot loop pays for an atomic store rarely.
    func publish(_ count: Int) { received.store(count, ordering: .relaxed) }

    var current: Int { received.load(ordering: .relaxed) }

    /// Ends the process with status 3 and a partial result when no event arrived for `idleTimeout` seconds,
    /// so a stalled stream is reported instead of hanging the suite.
    func watch(idleTimeout: Double, label: String, window: MeasurementWindow) -> Task<Void, Never> {
        Task.detached { [self] in
            var last = -1
            var idleSince = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                let now = current
                if now != last {
                    last = now
                    idleSince = .now
                } else if ContinuousClock.now - idleSince > .seconds(idleTimeout) {
                    BenchResult(label: label, received: now, window: window, stalled: true).print()
                    exit(3)
                }
            }
        }
    }
}
