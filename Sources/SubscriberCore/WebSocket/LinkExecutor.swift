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

    /// A timer of the link's own whose deadline can move later without a wake (see ``LinkTimer``), or `nil` when the
    /// executor has none (the default): the link then sleeps with ``sleep(for:)`` and wakes at a deadline that a sign
    /// of life made obsolete, to sleep again until the new one.
    func makeTimer() async -> (any LinkTimer)?
}

extension LinkExecutor {
    /// No timer of the link's own: the link sleeps with ``sleep(for:)``.
    public func makeTimer() async -> (any LinkTimer)? { nil }
}

/// One link's timer, on its executor's thread, whose deadline moves later without waking anyone.
///
/// An idle link's deadlines keep moving later: a `ka` or a pong postpones the next ping by a whole quiet period. A
/// timer that can only be cancelled and armed anew for an earlier instant (NIO's loop keeps its kernel timer armed for
/// the earliest deadline it was ever given) wakes at the obsolete deadline anyway. This one re-arms its own kernel
/// timer (`timerfd_settime` on Linux) from the thread that received the sign of life, so the thread sleeps until the
/// deadline that exists.
public protocol LinkTimer: AnyObject, Sendable {
    /// Suspends until `duration` from now, or until the instant a later ``reschedule(after:)`` moved the deadline to.
    /// It may return early (the timer was closed, say): the caller reads its deadline again.
    ///
    /// - Throws: `CancellationError` as soon as the calling task is cancelled.
    func sleep(for duration: Duration) async throws

    /// Moves the deadline of the sleep in progress (or of the next one) to `duration` from now, without waking it.
    func reschedule(after duration: Duration)

    /// Releases the timer (its descriptor, on Linux). A sleep in progress returns; later sleeps use the executor's.
    func close()
}
