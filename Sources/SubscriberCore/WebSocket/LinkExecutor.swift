/// The thread a connection already runs on (NIO's event loop), offered to the link that uses the connection so that an
/// idle link wakes that thread only.
///
/// Without one, every deadline of a link (the next ping, a pong timeout, a `ka` watchdog) is a sleep on the global
/// executor, and every inbound frame resumes the reader there: on Linux each costs a wake of the dispatch timer thread
/// and of a pool thread, often a newly created one. With one, the link's reader, writer and timer run on the
/// connection's thread and the timer sleeps on that thread's own timers: a frame or a deadline wakes one thread once.
///
/// A connection offers it through ``WebSocketConnection/linkExecutor``. A connector without a thread of its own (the
/// URLSession connector, a test's scripted server) offers none, and its links run on the global executor as before.
public protocol LinkExecutor: Sendable {
    /// Runs `operation` with this executor as the task executor preference of the current task, so `operation` and
    /// the child tasks it starts run on it (where the platform has task executors; elsewhere `operation` just runs).
    func run<Value: Sendable>(_ operation: @Sendable () async -> Value) async -> Value

    /// Suspends for `duration` on this executor's own timer.
    ///
    /// - Throws: `CancellationError` as soon as the calling task is cancelled.
    func sleep(for duration: Duration) async throws
}
