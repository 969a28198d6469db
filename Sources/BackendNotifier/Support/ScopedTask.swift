import SubscriberCore

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

    /// Whether ``cancel()`` was called (or the work was spawned on a closed scope).
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

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
