import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

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

    @Test("closing the scope cancels the work that runs, and work spawned afterwards is dropped at once, never run")
    func closeCancelsEverything() async throws {
        final class Token: Sendable {}
        let scope = TaskScope()
        let ended = OneShotSignal<Void>()
        scope.spawn {
            _ = await OneShotSignal<Void>().wait()  // returns nil once the scope cancels it
            ended.fire()
        }
        scope.close()
        try await withTestTimeout(5, "the running work to be cancelled") { _ = await ended.wait() }
        var token: Token? = Token()
        let captured = WeakReference(token!)
        let late = scope.spawn { [token] in _ = token }
        token = nil
        // The work (and what it captured) is gone as spawn returns: nothing is left that could run it later.
        #expect(captured.isReleased)
        #expect(late.isCancelled)
    }
}
