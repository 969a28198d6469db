import NIOCore
import SubscriberCore

/// A connection's event loop as the ``LinkExecutor`` of its link: the link's tasks run on the loop that reads the
/// socket, and its timer is a task scheduled on that loop. A frame resumes the reader without waking another thread,
/// a deadline wakes the loop's thread alone, and a ping is written from the thread that writes anyway.
final class EventLoopLinkExecutor: LinkExecutor {
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func run<Value: Sendable>(_ operation: @Sendable () async -> Value) async -> Value {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return await withTaskExecutorPreference(self) { await operation() }
        }
        return await operation()
    }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let scheduled = eventLoop.scheduleTask(in: TimeAmount(duration)) {}
        try await withTaskCancellationHandler {
            do { try await scheduled.futureResult.get() } catch { throw CancellationError() }  // only a cancel fails it
        } onCancel: {
            scheduled.cancel()
        }
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension EventLoopLinkExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
