/// What ``withDeadline(_:on:mode:_:)`` does with an operation it stops waiting for, because the timeout passed or
/// because the caller was cancelled. Either way the operation is cancelled; the modes differ in whether the call waits
/// for it to end.
package enum DeadlineMode: Sendable {
    /// Waits for the operation to end, so nothing outlives the call: for an operation that answers cancellation
    /// promptly (one that hangs would hold the caller). A cancelled caller gets what the operation returns then.
    case awaitOperation
    /// Returns at once and leaves the operation to end on its own, whatever it does with the cancellation: for an
    /// operation that may ignore it (an app's fetch). What it returns later is dropped. A cancelled caller gets `nil`,
    /// as on a timeout (check `Task.isCancelled` to tell them apart).
    case abandonOperation
}

/// `operation`'s result, or `nil` if `timeout` passes on `clock` first; the operation is then cancelled, and `mode`
/// says whether this waits for it to end. Cancelling the caller cancels both the operation and the timer.
package func withDeadline<T: Sendable>(
    _ timeout: Duration, on clock: some Clock<Duration>, mode: DeadlineMode, _ operation: @escaping @Sendable () async -> T
) async -> T? {
    switch mode {
    case .awaitOperation:
        return await race(operation, against: timeout, on: clock)
    case .abandonOperation:
        // A child task is always awaited, so the operation runs in a task of its own; the race awaits only the wait
        // for its answer, which ends as soon as it is cancelled.
        let answer = OneShotSignal<T>()
        let running = Task { answer.fire(await operation()) }
        defer { running.cancel() }
        // `nil` inside: the wait was cancelled (the caller was).
        return await race({ await answer.wait() }, against: timeout, on: clock) ?? nil
    }
}

/// `operation`'s result, or `nil` if `timeout` passes on `clock` first. Structured: returns once the operation, then
/// cancelled, has ended.
private func race<T: Sendable>(
    _ operation: @escaping @Sendable () async -> T, against timeout: Duration, on clock: some Clock<Duration>
) async -> T? {
    await withTaskGroup(of: DeadlineOutcome<T>.self) { group in
        group.addTask { .answered(await operation()) }
        group.addTask {
            do { try await clock.sleepReleasingOnCancel(for: timeout) } catch { return .sleepCancelled }
            return .timedOut
        }
        var result: T?
        while let outcome = await group.next() {
            switch outcome {
            case .answered(let value): result = value
            case .timedOut: result = nil
            case .sleepCancelled: continue
            }
            break
        }
        group.cancelAll()
        return result
    }
}

/// What finished first in ``race(_:against:on:)``.
private enum DeadlineOutcome<T: Sendable>: Sendable {
    case answered(T)
    case timedOut
    case sleepCancelled
}
