import SubscriberCore

/// One failover deadline on the stack's scope. Disarming voids it even when its sleep has already ended: a scoped
/// task's cancellation arrives shortly after `cancel()`, so a generation decides whether the action still runs.
final class FailoverDeadline: Sendable {
    private struct State {
        var generation = 0
        var task: ScopedTask?
        /// The deadline asked for and not disarmed: kept while held, to run in full once released.
        var armed: (duration: Duration, action: @Sendable () -> Void)?
        var held = false
    }

    private let state = Locked(State())
    private let scope: TaskScope
    private let clock: any Clock<Duration>

    init(scope: TaskScope, clock: any Clock<Duration>) {
        self.scope = scope
        self.clock = clock
    }

    /// Runs `action` after `duration` unless disarmed first; does nothing while armed (or fired and not disarmed).
    /// While held, the sleep starts only once released.
    func arm(after duration: Duration, _ action: @escaping @Sendable () -> Void) {
        state.withLock { state in
            guard state.armed == nil else { return }
            state.armed = (duration, action)
            if !state.held { start(&state) }
        }
    }

    func disarm() {
        state.withLock { state in
            stop(&state)
            state.armed = nil
        }
    }

    /// Holds the deadline (no network: a transport that makes no attempts is not failing) or releases it. Held, an
    /// armed deadline stops and waits; released, it sleeps its whole duration again from then.
    func hold(_ held: Bool) {
        state.withLock { state in
            guard state.held != held else { return }
            state.held = held
            if held { stop(&state) } else { start(&state) }
        }
    }

    /// Whether the deadline is held.
    var isHeld: Bool { state.withLock { $0.held } }

    private func start(_ state: inout State) {
        guard let armed = state.armed else { return }
        let generation = state.generation
        state.task = scope.spawn { [self] in
            do { try await clock.sleepReleasingOnCancel(for: armed.duration) } catch { return }
            self.state.withLock { if $0.generation == generation { armed.action() } }
        }
    }

    private func stop(_ state: inout State) {
        state.generation += 1
        state.task?.cancel()
        state.task = nil
    }
}
