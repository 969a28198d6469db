import Foundation
import SubscriberCore

/// A test waited longer than it allowed for something to happen.
public struct TestTimeoutError: Error, Sendable, CustomStringConvertible {
    /// What was awaited.
    public var what: String
    /// Creates the error.
    public init(what: String) { self.what = what }
    /// One readable line.
    public var description: String { "timed out waiting for \(what)" }
}

/// How long tests wait in real time before they give up: every deadline a test sets on something that should happen
/// (never a wait for nothing to happen) goes through ``scaled(_:)``.
///
/// `VORTEX_TEST_TIME_SCALE` (a number ≥ 1, default 1) stretches them all for runs that are slow on purpose: the thread
/// sanitizer slows code down 5-15 times, and `scripts/sanitize.sh` sets it. A deadline only bounds a hang, so a
/// larger one never makes a passing test fail.
public enum TestTime {
    /// The factor, read once from `VORTEX_TEST_TIME_SCALE`; 1 when unset or not a number ≥ 1.
    public static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["VORTEX_TEST_TIME_SCALE"], let value = Double(text), value >= 1,
            value.isFinite
        else { return 1 }
        return value
    }()

    /// `seconds` times ``scale``.
    public static func scaled(_ seconds: Double) -> Double { seconds * scale }

    /// `duration` times ``scale``.
    public static func scaled(_ duration: Duration) -> Duration { duration * scale }

    /// How long a polled wait pauses between two checks of its condition. Not shorter: on 2 cores a few hundred
    /// tests wait at once, and a millisecond's pause each would wake the cooperative pool hundreds of thousands of
    /// times a second, starving the very code they wait for.
    public static let pollInterval: Duration = .milliseconds(10)

    /// Pauses one ``pollInterval`` between two checks of a polled condition.
    public static func pollPause() async throws { try await Task.sleep(for: pollInterval) }
}

/// Runs `operation`, failing with ``TestTimeoutError`` if it takes longer than `seconds` of real time (times
/// ``TestTime/scale``), so a hang fails a test instead of blocking the suite.
///
/// The operation runs in a task of its own that is cancelled on timeout but never awaited after it: an operation that
/// ignores cancellation still cannot hold the test up.
public func withTestTimeout<T: Sendable>(
    _ seconds: Double = scriptedWait, _ what: String = "operation", _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let slot = Locked<CheckedContinuation<T, any Error>?>(nil)
    // Resumes the caller once: with the operation's result or the timeout, whichever comes first.
    let resume: @Sendable (Result<T, any Error>) -> Bool = { result in
        guard
            let continuation = slot.withLock({ slot in
                defer { slot = nil }; return slot
            })
        else { return false }
        continuation.resume(with: result)
        return true
    }
    let tasks = Locked<(work: Task<Void, Never>?, timer: Task<Void, Never>?)>((nil, nil))
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            slot.withLock { $0 = continuation }
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                if resume(result) { tasks.withLock { $0.timer?.cancel() } }
            }
            let timer = Task {
                try? await Task.sleep(for: .milliseconds(Int64(TestTime.scaled(seconds) * 1000)))
                guard !Task.isCancelled else { return }
                if resume(.failure(TestTimeoutError(what: what))) { work.cancel() }
            }
            tasks.withLock { $0 = (work, timer) }
        }
    } onCancel: {
        let (work, timer) = tasks.withLock { $0 }
        work?.cancel()
        timer?.cancel()
    }
}

/// Waits in real time until `condition` holds, checking it every millisecond: for an explicit event a test cannot be
/// told of otherwise (a consumer waiting, a connection accepted). Throws ``TestTimeoutError`` after `seconds` (times
/// ``TestTime/scale``).
public func waitUntil(_ what: String, timeout seconds: Double = scriptedWait, _ condition: @escaping @Sendable () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: TestTime.scaled(.milliseconds(Int64(seconds * 1000))))
    while !condition() {
        guard clock.now < deadline else { throw TestTimeoutError(what: what) }
        try await TestTime.pollPause()
    }
}
