import Foundation

/// The thread a link's reader runs on: a serial task executor that calls `onSuspend` every time the reader's job
/// returns, that is, whenever the reader has handled every frame the socket had and waits for more.
///
/// That instant is what ``DeliveryBatch`` needs: a read's frames are handled in one go and their events reach each
/// consumer with one wake-up, instead of one per event. A link owns one executor for its lifetime and stops it when
/// the reader has ended.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package final class ReaderExecutor: TaskExecutor, @unchecked Sendable {
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private let condition = NSCondition()
    private let onSuspend: @Sendable () -> Void

    /// Starts the executor's thread.
    package init(name: String, onSuspend: @escaping @Sendable () -> Void) {
        self.onSuspend = onSuspend
        // The thread keeps the executor alive until it has run every job and stop() was called.
        let thread = Thread { [self] in
            // Named from inside: Foundation on Linux names the OS thread only for the current thread (15 bytes max).
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

    /// Ends the thread once the jobs already enqueued have run. Call it after the reader's scope has returned.
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
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            swap(&batch, &jobs)
            condition.unlock()
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
            onSuspend()
        }
    }
}
