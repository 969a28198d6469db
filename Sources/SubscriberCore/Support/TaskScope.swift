/// A long-lived owner's background work (the notifier's upstream pumps, timers and disconnects, the stack's failover
/// watch) as one structured scope: every piece of work is a child task of one task group, and closing the scope (or
/// releasing it) cancels them all. Each piece can still be cancelled on its own through its ``ScopedTask``.
///
/// The owner keeps one root task (the group's), owned and cancelled the way a service's `run()` is: it lives exactly as
/// long as its owner (``close()`` or `deinit` cancels it), instead of one unstructured task per piece of work that
/// nobody owns once its handle is dropped. The notifier and Composition's stack own one each.
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

    /// Starts `work` as a child of the scope. On a closed scope the work is dropped at once (it never runs) and the
    /// returned task is already cancelled.
    @discardableResult
    package func spawn(_ work: @escaping @Sendable () async -> Void) -> ScopedTask {
        let handle = ScopedTask()
        if case .terminated = jobs.yield(Job(work: work, handle: handle)) { handle.cancel() }
        return handle
    }

    /// Cancels every piece of work and accepts no more.
    package func close() {
        jobs.finish()
        root.cancel()
    }

    deinit { close() }
}
