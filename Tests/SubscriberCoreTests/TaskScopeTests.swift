import RealtimeTesting
import Testing

@testable import SubscriberCore

@Suite("TaskScope")
struct TaskScopeTests {
    @Test("cancelling a scoped task cancels its work (as Swift cancellation) and leaves the scope's other work running")
    func cancelReachesTheWork() async throws {
        let scope = TaskScope()
        let started = OneShotSignal<Void>()
        let handled = OneShotSignal<Void>()
        let other = OneShotSignal<Void>()
        let task = scope.spawn {
            await withTaskCancellationHandler {
                started.fire()
                _ = await OneShotSignal<Void>().wait()  // until cancelled
            } onCancel: {
                handled.fire()
            }
        }
        let bystander = scope.spawn {
            _ = await OneShotSignal<Void>().wait()
            other.fire()
        }
        try await withTestTimeout(5, "the work to start") { _ = await started.wait() }
        task.cancel()
        #expect(task.isCancelled)
        try await withTestTimeout(5, "the cancellation to reach the work") { _ = await handled.wait() }
        #expect(!other.isFired && !bystander.isCancelled)
        scope.close()
        try await withTestTimeout(5, "closing to cancel the rest") { _ = await other.wait() }
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
        weak let captured = token
        let late = scope.spawn { [token] in _ = token }
        token = nil
        // The work (and what it captured) is gone as spawn returns: nothing is left that could run it later.
        #expect(captured == nil)
        #expect(late.isCancelled)
    }
}
