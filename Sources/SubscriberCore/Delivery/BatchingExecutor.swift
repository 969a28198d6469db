import Foundation

/// A thread that runs reader tasks which cannot see where a batch ends (the notifier's upstream pumps read a stream,
/// not a socket) and, every time one of them suspends, flushes the ``DeliveryBatch``es registered with it.
///
/// A job returning means its task has handled everything it had (every event its upstream had queued) and waits for
/// more: the instant to wake the consumers, once for all of it. (A link's reader needs none of this: it gets a
/// socket read's frames at once and flushes after them.)
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package final class BatchingExecutor: TaskExecutor, @unchecked Sendable {
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private var activeRuns = 0
    private let condition = NSCondition()
    private let batches = Locked<[ObjectIdentifier: DeliveryBatch]>([:])

    /// Starts the executor's thread, named `name` (at most 15 bytes show on Linux).
    package init(name: String) {
        // The thread keeps the executor alive until it has run every job and stop() was called.
        let thread = Thread { [self] in
            // Named from inside: Foundation on Linux names the OS thread only for the current thread.
            Thread.current.name = name
            run()
        }
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on this executor with a delivery batch of its own, flushed whenever the body suspends and closed
    /// when it returns.
    package func run<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        let batch = DeliveryBatch()
        batches.withLock { $0[ObjectIdentifier(batch)] = batch }
        changeActiveRuns(by: 1)
        let result = await withTaskExecutorPreference(self) {
            await DeliveryBatch.$current.withValue(batch) { await body() }
        }
        batches.withLock { $0[ObjectIdentifier(batch)] = nil }
        batch.close()
        changeActiveRuns(by: -1)
        return result
    }

    private func changeActiveRuns(by change: Int) {
        condition.lock()
        activeRuns += change
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once no `run` is in progress and every job has run (a run still in progress keeps it).
    package func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        while true {
            condition.lock()
            while jobs.isEmpty && (!stopped || activeRuns > 0) { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
            for pending in batches.withLock({ Array($0.values) }) { pending.flush() }
        }
    }
}
