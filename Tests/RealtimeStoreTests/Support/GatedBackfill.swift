import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore

/// A presence backfill whose calls wait until the test answers them (or answer at once once `opened`).
final class GatedBackfill: Sendable {
    private struct State {
        var calls: [Date] = []
        var waiting: [CheckedContinuation<Result<[DevicePresenceOutput], BackfillScriptError>, Never>] = []
        var gated = true
    }

    private let state = Locked(State())

    var calls: [Date] { state.withLock { $0.calls } }
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Calls answer at once with nothing from now on (the waiting ones stay waiting).
    func open() { state.withLock { $0.gated = false } }
    /// Calls wait for ``answer(_:)`` from now on.
    func close() { state.withLock { $0.gated = true } }

    /// Answers the oldest waiting call.
    func answer(_ result: Result<[DevicePresenceOutput], BackfillScriptError>) {
        let waiter = state.withLock { $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }
        waiter?.resume(returning: result)
    }

    /// Answers the newest waiting call.
    func answerNewest(_ result: Result<[DevicePresenceOutput], BackfillScriptError>) {
        let waiter = state.withLock { $0.waiting.popLast() }
        waiter?.resume(returning: result)
    }

    /// Ignores cancellation, like a fetch that hangs.
    @Sendable func fetch(since: Date) async throws -> [DevicePresenceOutput] {
        let result = await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                state.calls.append(since)
                if state.gated { state.waiting.append(continuation) }
                return !state.gated
            }
            if now { continuation.resume(returning: .success([])) }
        }
        return try result.get()
    }

    func waitForCalls(_ count: Int, _ what: String) async throws {
        try await withTestTimeout(10, what) {
            while self.calls.count < count { try await TestTime.pollPause() }
        }
    }
}
