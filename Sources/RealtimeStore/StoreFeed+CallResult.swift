import BackendNotifier
import Foundation
import SubscriberCore

extension StoreFeed {
    /// What a call returned: its events, or the failure as text, or nothing (the calling task was cancelled).
    enum CallResult: Sendable {
        case success([VortexEvent])
        case failure(String)
        case cancelled
    }

    /// Calls `fetch`, racing it against `timeout` on the store's clock: a call that has not returned by then fails with
    /// "timed out" and is cancelled. It is abandoned rather than awaited (then or when the run ends): an app's fetch
    /// may ignore cancellation, and must not hold the run's end. What it returns later is dropped.
    func call(_ fetch: @escaping Fetch, since: Date, timeout: Duration) async -> CallResult {
        // A local copy: the stored existential is not opened for the helper's `some Clock` (Swift 6.3).
        let clock = clock
        let answer: CallResult? = await withDeadline(timeout, on: clock, mode: .abandonOperation) {
            do { return .success(try await fetch(since)) } catch { return .failure("\(error)") }
        }
        if let answer { return answer }
        // Abandoning, the helper answers a cancelled caller as it answers a timeout.
        return Task.isCancelled ? .cancelled : .failure("timed out after \(timeout)")
    }
}
