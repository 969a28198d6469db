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
        let ran = Locked(0)
        let ended = OneShotSignal<Void>()
        scope.spawn {
            _ = await OneShotSignal<Void>().wait()  // returns nil once the scope cancels it
            ended.fire()
        }
        scope.close()
        try await withTestTimeout(5, "the running work to be cancelled") { _ = await ended.wait() }
        scope.spawn { ran.withLock { $0 += 1 } }
        try await Task.sleep(for: .milliseconds(20))
        #expect(ran.withLock { $0 } == 0)
    }
}
