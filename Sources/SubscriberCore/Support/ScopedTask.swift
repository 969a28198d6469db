/// One piece of work in a ``TaskScope``, which can be cancelled on its own.
///
/// The work runs beside a waiter for ``cancel()`` in a small task group of its own: whichever ends first cancels the
/// other. So cancelling reaches the work as ordinary Swift cancellation, shortly after `cancel()` returns (no task
/// handle is kept beyond the closure that gave it). Callers that must not act on a cancelled piece's late result
/// check a token of their own (the notifier's timers and state follower carry one; a pump's delivery is closed first).
package final class ScopedTask: Sendable {
    private let cancelled = OneShotSignal<Void>()

    /// Asks the work to stop: it is cancelled as soon as its group runs the waiter; work not started yet never starts.
    package func cancel() { cancelled.fire() }

    /// Whether ``cancel()`` was called (or the work was spawned on a closed scope).
    package var isCancelled: Bool { cancelled.isFired }

    func run(_ work: @escaping @Sendable () async -> Void) async {
        guard !cancelled.isFired else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask(operation: work)
            group.addTask { [cancelled] in _ = await cancelled.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
