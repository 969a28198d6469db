/// A long-lived owner's background work (the notifier's upstream pumps and timers, the stack's failover watch) as one
/// structured scope: every piece of work is a child task of one task group, and closing the scope (or releasing it)
/// cancels them all. Each piece can still be cancelled on its own through its ``ScopedTask``.
///
/// The owner keeps one root task (the group's), instead of one unstructured task per piece of work that nobody owns
/// once its handle is dropped.
package final class TaskScope: Sendable {
    private struct Job: Sendable {
        let work: @Sendable () async -> Void
        let handle: ScopedTask
    }

    private let jobs: AsyncStream<Job>.Continuation
    private let root: Task<Void, Never>

    /// Opens the scope.
    package init() {
        let (stream, jobs) = AsyncStream<Job>.makeStream()
        self.jobs = jobs
        root = Task {
            await withDiscardingTaskGroup { group in
                for await job in stream { group.addTask { await job.handle.run(job.work) } }
            }
        }
    }

    /// Starts `work` as a child of the scope. On a closed scope the work never runs.
    @discardableResult
    package func spawn(_ work: @escaping @Sendable () async -> Void) -> ScopedTask {
        let handle = ScopedTask()
        jobs.yield(Job(work: work, handle: handle))
        return handle
    }

    /// Cancels every piece of work and accepts no more.
    package func close() {
        jobs.finish()
        root.cancel()
    }

    deinit { close() }
}

/// One piece of work in a ``TaskScope``.
package final class ScopedTask: Sendable {
    private struct State {
        /// The child task while the work runs; only touched under the lock, and cleared before the task ends.
        var task: UnsafeCurrentTask?
        var cancelled = false
    }

    private let state = Locked(State())

    /// Cancels the work at once, as `Task.cancel()` does: its cancellation handlers run before this returns. (So a
    /// cancellation handler must not cancel the same `ScopedTask` again.)
    package func cancel() {
        state.withLock { state in
            state.cancelled = true
            state.task?.cancel()
        }
    }

    func run(_ work: @Sendable () async -> Void) async {
        let current = withUnsafeCurrentTask { $0 }
        let start = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.task = current
            return true
        }
        guard start else { return }
        await work()
        state.withLock { $0.task = nil }
    }
}
