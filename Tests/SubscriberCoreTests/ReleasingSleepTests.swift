import Foundation
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// ``Clock/sleepReleasingOnCancel(until:tolerance:)``: on `ContinuousClock` on Linux a Dispatch timer freed on
/// cancellation; elsewhere the clock's own sleep.
@Suite("Sleeps that give their timer back")
struct ReleasingSleepTests {
    @Test("a sleep on the continuous clock lasts its duration")
    func sleepsItsDuration() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        try await clock.sleepReleasingOnCancel(for: .milliseconds(50))
        #expect(start.duration(to: clock.now) >= .milliseconds(50))
    }

    @Test("a long sleep cancelled while it sleeps, or before it starts, throws CancellationError at once")
    func cancellation() async throws {
        let sleeping = Task { try await ContinuousClock().sleepReleasingOnCancel(for: .seconds(3600)) }
        try await Task.sleep(for: .milliseconds(20))
        sleeping.cancel()
        let result = try await withTestTimeout(5, "the cancelled sleep") { await sleeping.result }
        #expect(throws: CancellationError.self) { try result.get() }

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await ContinuousClock().sleepReleasingOnCancel(for: .seconds(3600))
        }
        let earlyResult = try await withTestTimeout(5, "the sleep cancelled before it began") { await early.result }
        #expect(throws: CancellationError.self) { try earlyResult.get() }
    }

    @Test("many sleeps cancelled at random points of their start each end exactly once (run it under TSan)")
    func racingCancellations() async throws {
        try await withTestTimeout(30, "the racing sleeps") {
            await withTaskGroup(of: Bool.self) { group in
                for index in 0..<500 {
                    let sleeper = Task { try await ContinuousClock().sleepReleasingOnCancel(for: .seconds(600)) }
                    group.addTask {
                        if index % 2 == 0 { await Task.yield() }
                        sleeper.cancel()
                        return (try? await sleeper.value) == nil
                    }
                }
                for await threw in group { #expect(threw) }
            }
        }
    }

    @Test("a manual clock sleeps on its own, until advanced")
    func otherClocks() async throws {
        let clock = ManualClock()
        let done = OneShotSignal<Void>()
        let sleeper = Task {
            try await clock.sleepReleasingOnCancel(for: .seconds(10))
            done.fire()
        }
        try await clock.waitForSleepers(atLeast: 1)
        #expect(!done.isFired)
        clock.advance(by: .seconds(10))
        try await withTestTimeout(5, "the manual sleep") { try await sleeper.boundedValue() }
        #expect(done.isFired)
    }
}
