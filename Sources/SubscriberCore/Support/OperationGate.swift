/// A first-come, first-served asynchronous lock, for operations that must run one at a time even though each of them
/// suspends (actors are re-entrant across `await`): the notifier's identity updates, switches, suspensions and
/// resumptions, and the stack's manual switches, failovers and failbacks.
package final class OperationGate: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    package init() {}

    /// Whether an operation holds the gate (observers that arrive meanwhile are started when it is released).
    package var isBusy: Bool { state.withLock { $0.busy } }

    /// How many operations wait for the gate.
    package var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Waits for the gate (in arrival order) and takes it.
    package func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the gate to the next waiter, or frees it.
    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
