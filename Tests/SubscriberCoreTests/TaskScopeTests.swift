import RealtimeTesting
import Testing

@testable import SubscriberCore

@Suite("TaskScope")
struct TaskScopeTests {
    @Test("cancelling a scoped task runs its cancellation handlers before cancel() returns, as Task.cancel() does")
    func cancelIsImmediate() async throws {
        let scope = TaskScope()
        let started = OneShotSignal<Void>()
        let handled = Locked(false)
        let task = scope.spawn {
            await withTaskCancellationHandler {
                started.fire()
                _ = await OneShotSignal<Void>().wait()  // until cancelled
            } onCancel: {
                handled.withLock { $0 = true }
            }
        }
        try await withTestTimeout(5, "the work to start") { _ = await started.wait() }
        task.cancel()
        #expect(handled.withLock { $0 })
        scope.close()
    }

    @Test("closing the scope cancels the work that runs and runs nothing spawned afterwards")
    func closeCancelsEverything() async throws {
        let scope = TaskScope()
        let ended = OneShotSignal<Void>()
        scope.spawn {
            _ = await OneShotSignal<Void>().wait()  // returns nil once the scope cancels it
            ended.fire()
        }
        scope.close()
        try await withTestTimeout(5, "the running work to be cancelled") { _ = await ended.wait() }
        // Work spawned now is dropped on the spot: once `spawn` returns it has not run and nothing holds it any more, so
        // it never will. (No waiting for something not to happen: the work itself is gone.)
        let ran = Locked(false)
        weak var dropped: WorkProbe?
        do {
            let probe = WorkProbe()
            dropped = probe
            scope.spawn {
                _ = probe
                ran.withLock { $0 = true }
            }
        }
        #expect(dropped == nil, "the scope still holds work spawned after it closed")
        #expect(!ran.withLock { $0 })
    }
}

/// Something scoped work holds, to see whether the work still exists.
private final class WorkProbe: Sendable {}
