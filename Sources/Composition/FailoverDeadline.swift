import SubscriberCore

/// One failover deadline on the stack's scope. Disarming voids it even when its sleep has already ended: a scoped
/// task's cancellation arrives shortly after `cancel()`, so a generation decides whether the action still runs.
final class FailoverDeadline: Sendable {
    private struct State {
        var generation = 0
        var task: ScopedTask?
    }

    private let state = Locked(State())
    private let scope: TaskScope
    private let clock: any Clock<Duration>

    init(scope: TaskScope, clock: any Clock<Duration>) {
        self.scope = scope
        self.clock = clock
    }

    /// Runs `action` after `duration` unless disarmed first; does nothing while armed (or fired and not disarmed).
    func arm(after duration: Duration, _ action: @escaping @Sendable () -> Void) {
        state.withLock { state in
            guard state.task == nil else { return }
            let generation = state.generation
            state.task = scope.spawn { [self] in
                do { try await clock.sleepReleasingOnCancel(for: duration) } catch { return }
                self.state.withLock { if $0.generation == generation { action() } }
            }
        }
    }

    func disarm() {
        state.withLock { state in
            state.generation += 1
            state.task?.cancel()
            state.task = nil
        }
    }
}
