import Dispatch

extension Clock where Duration == Swift.Duration {
    /// Sleeps until `deadline`, as `sleep(until:tolerance:)` does, but gives back the timer's memory the moment the
    /// sleep is cancelled.
    ///
    /// The runtime's own sleep on Linux keeps its timer (about 0.8 KB) queued until the original deadline even when
    /// the sleep was cancelled long before: measured with `LifecycleBench sessions`, every ended session kept 1.5–2.3
    /// KB that way for up to a minute (its handshake deadline and its network-error limit), so memory grew with the
    /// sessions of the last minute. On `ContinuousClock` on Linux this sleeps on a Dispatch timer that is cancelled,
    /// and freed, on cancellation. Any other clock (a test's manual clock, Apple's, where `ContinuousClock` must
    /// count the time the device sleeps) sleeps as before.
    package func sleepReleasingOnCancel(until deadline: Instant, tolerance: Swift.Duration? = nil) async throws {
        #if os(Linux)
        if self is ContinuousClock {
            return try await DispatchTimerSleep.sleep(for: now.duration(to: deadline), leeway: tolerance)
        }
        #endif
        try await sleep(until: deadline, tolerance: tolerance)
    }

    /// ``sleepReleasingOnCancel(until:tolerance:)`` for `duration` from now.
    package func sleepReleasingOnCancel(for duration: Swift.Duration, tolerance: Swift.Duration? = nil) async throws {
        try await sleepReleasingOnCancel(until: now.advanced(by: duration), tolerance: tolerance)
    }
}

/// A sleep on a Dispatch timer source, cancelled with the task. On Linux, Dispatch's uptime clock is
/// `CLOCK_MONOTONIC`, which differs from `ContinuousClock`'s `CLOCK_BOOTTIME` only while the machine is suspended.
enum DispatchTimerSleep {
    private enum State {
        case starting
        case sleeping(CheckedContinuation<Void, any Error>, any DispatchSourceTimer)
        case cancelledBeforeStart
        case finished
    }

    static func sleep(for delay: Duration, leeway: Duration?) async throws {
        try Task.checkCancellation()
        guard delay > .zero else { return }
        let state = Locked(State.starting)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if case .cancelledBeforeStart = state { return true }
                    return false
                }
                if cancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let source = DispatchSource.makeTimerSource(queue: .global())
                source.setEventHandler { finish(state, .success(())) }
                source.schedule(deadline: .now() + nanoseconds(delay), leeway: nanoseconds(leeway ?? .milliseconds(1)))
                let started = state.withLock { state -> Bool in
                    guard case .starting = state else { return false }
                    state = .sleeping(continuation, source)
                    return true
                }
                // Resumed in any case: a Dispatch source released while suspended is a crash, and a cancelled one
                // completes its cancellation once resumed.
                if !started {
                    source.cancel()
                    continuation.resume(throwing: CancellationError())
                }
                source.resume()
            }
        } onCancel: {
            finish(state, .failure(CancellationError()))
        }
    }

    private static func nanoseconds(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        let product = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = product.overflow ? Int64.max : product.partialValue &+ attoseconds / 1_000_000_000
        return .nanoseconds(Int(clamping: total))
    }

    private static func finish(_ state: Locked<State>, _ result: Result<Void, any Error>) {
        let sleeping = state.withLock { state -> (CheckedContinuation<Void, any Error>, any DispatchSourceTimer)? in
            switch state {
            case .sleeping(let continuation, let source):
                state = .finished
                return (continuation, source)
            case .starting:
                if case .failure = result { state = .cancelledBeforeStart }
                return nil
            case .cancelledBeforeStart, .finished:
                return nil
            }
        }
        guard let (continuation, source) = sleeping else { return }
        source.cancel()
        continuation.resume(with: result)
    }
}
