import RealtimeTesting
import Testing

@testable import SubscriberCore

/// An operation that ignores cancellation: it answers only once the test releases it, and records what happened to it.
private final class StubbornOperation: Sendable {
    let started = OneShotSignal<Void>()
    let cancelled = OneShotSignal<Void>()
    let ended = OneShotSignal<Void>()
    private let gate = Locked<(answer: Int?, waiter: CheckedContinuation<Int, Never>?)>((nil, nil))

    @Sendable func run() async -> Int {
        started.fire()
        let answer = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
                let ready = gate.withLock { gate -> Int? in
                    if let answer = gate.answer { return answer }
                    gate.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancelled.fire()
        }
        ended.fire()
        return answer
    }

    /// Lets the operation answer `answer`.
    func release(_ answer: Int) {
        let waiter = gate.withLock { gate -> CheckedContinuation<Int, Never>? in
            gate.answer = answer
            defer { gate.waiter = nil }
            return gate.waiter
        }
        waiter?.resume(returning: answer)
    }
}

/// What ``withDeadline(_:on:mode:_:)`` returned, and whether the operation had ended by then.
private struct DeadlineCall: Sendable {
    let result: Int?
    let operationEnded: Bool
}

@Suite("withDeadline: a bounded wait that awaits or abandons the operation")
struct WithDeadlineTests {
    /// Calls `withDeadline` on a stubborn operation with a 5 s timeout; returns once the operation runs and the timer
    /// is armed.
    private static func start(
        _ mode: DeadlineMode
    ) async throws -> (clock: ManualClock, operation: StubbornOperation, call: Task<DeadlineCall, Never>) {
        let clock = ManualClock()
        let operation = StubbornOperation()
        let call = Task {
            let result = await withDeadline(.seconds(5), on: clock, mode: mode, operation.run)
            return DeadlineCall(result: result, operationEnded: operation.ended.isFired)
        }
        _ = try await withTestTimeout(5, "the operation's start") { await operation.started.wait() }
        try await clock.waitForSleeper(sleeping: .seconds(5))
        return (clock, operation, call)
    }

    @Test(
        "an answer before the deadline is returned, and the timer is gone",
        arguments: [DeadlineMode.awaitOperation, .abandonOperation])
    func answeredInTime(mode: DeadlineMode) async throws {
        let (clock, operation, call) = try await Self.start(mode)
        operation.release(42)
        let outcome = try await call.boundedValue()
        #expect(outcome.result == 42)
        #expect(outcome.operationEnded)
        #expect(clock.sleeperCount == 0)
    }

    @Test("abandoning: an operation that ignores cancellation times out; it is cancelled, not awaited, its late answer dropped")
    func abandonedOnTimeout() async throws {
        let (clock, operation, call) = try await Self.start(.abandonOperation)
        clock.advance(by: .seconds(5))
        let outcome = try await call.boundedValue()
        #expect(outcome.result == nil)
        #expect(!outcome.operationEnded, "returned while the operation still ran")
        #expect(operation.cancelled.isFired)
        operation.release(7)
        _ = try await withTestTimeout(5, "the abandoned operation's end") { await operation.ended.wait() }
    }

    @Test("abandoning: a cancelled caller gets nil at once, though the operation ignores the cancellation it is given")
    func abandonedOnCancel() async throws {
        let (clock, operation, call) = try await Self.start(.abandonOperation)
        call.cancel()
        let outcome = try await call.boundedValue()
        #expect(outcome.result == nil)
        #expect(!outcome.operationEnded)
        #expect(operation.cancelled.isFired)
        #expect(clock.sleeperCount == 0)
        operation.release(7)
        _ = try await withTestTimeout(5, "the abandoned operation's end") { await operation.ended.wait() }
    }

    @Test("awaiting: a timed-out operation is cancelled, and the call returns only once it has ended (its answer dropped)")
    func awaitedOnTimeout() async throws {
        let (clock, operation, call) = try await Self.start(.awaitOperation)
        clock.advance(by: .seconds(5))
        _ = try await withTestTimeout(5, "the operation's cancellation") { await operation.cancelled.wait() }
        operation.release(7)
        let outcome = try await call.boundedValue()
        #expect(outcome.result == nil)
        #expect(outcome.operationEnded)
    }

    @Test("awaiting: a cancelled caller gets what the operation answers to the cancellation")
    func awaitedOnCancel() async throws {
        let clock = ManualClock()
        let never = OneShotSignal<Int>()
        let call = Task { await withDeadline(.seconds(5), on: clock, mode: .awaitOperation) { await never.wait() ?? -1 } }
        try await clock.waitForSleeper(sleeping: .seconds(5))
        call.cancel()
        #expect(try await call.boundedValue() == -1)
        #expect(clock.sleeperCount == 0)
    }
}
