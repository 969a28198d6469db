import NIOCore
import SubscriberCore

/// A connection's event loop as the ``LinkExecutor`` of its link: the link's tasks run on the loop that reads the
/// socket, and its timer is a task scheduled on that loop. A frame resumes the reader without waking another thread,
/// a deadline wakes the loop's thread alone, and a ping is written from the thread that writes anyway. On Linux the link
/// also gets a timer of its own on the loop (``TimerFDLinkTimer``), which a sign of life moves later without a wake.
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
        try await Self.sleep(on: eventLoop, for: duration)
    }

    /// On Linux, a `timerfd` of the link's own on this loop (``TimerFDLinkTimer``); elsewhere none.
    func makeTimer() async -> (any LinkTimer)? {
        #if os(Linux) || os(Android)
        return await TimerFDLinkTimer.make(on: eventLoop)
        #else
        return nil
        #endif
    }

    /// A sleep scheduled on `eventLoop`'s timers; a cancel fails it at once.
    static func sleep(on eventLoop: any EventLoop, for duration: Duration) async throws {
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
