/// `operation`'s result, or `nil` if `timeout` passes on `clock` first; the operation is then cancelled, and this
/// returns without waiting for it. Cancelling the caller cancels both, and returns what the operation returns then,
/// so the operation must answer cancellation promptly.
package func withDeadline<T: Sendable>(
    _ timeout: Duration, on clock: some Clock<Duration>, _ operation: @escaping @Sendable () async -> T
) async -> T? {
    return await withTaskGroup(of: DeadlineOutcome<T>.self) { group in
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

/// What finished first in ``withDeadline(_:on:_:)``.
private enum DeadlineOutcome<T: Sendable>: Sendable {
    case answered(T)
    case timedOut
    case sleepCancelled
}
