/// A value set once and awaited by any number of tasks; waiting is cancellable (a cancelled waiter gets `nil`).
///
/// The one waiter type of the link layer: scopes use it for "the body started", "abort now" and "the link ended".
package final class OneShotSignal<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    package init() {}

    /// Whether the value was set.
    package var isFired: Bool { state.withLock { $0.value != nil } }

    /// The value, if it was set.
    package var value: Value? { state.withLock { $0.value } }

    /// Sets the value if none was set yet; returns whether this call set it.
    @discardableResult
    package func fire(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// Waits for the value; returns `nil` if the calling task is cancelled first.
    package func wait() async -> Value? {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let ready = state.withLock { state -> Value?? in
                    if let value = state.value { return .some(value) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}

extension OneShotSignal where Value == Void {
    /// Sets the signal.
    @discardableResult
    package func fire() -> Bool { fire(()) }
}
