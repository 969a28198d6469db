import Foundation
import NIOCore
import NIOPosix
import RealtimeTesting
import SubscriberCore
import Testing

@testable import WebSocketNIO

/// The event loop a NIO connection offers its link (``WebSocketConnection/linkExecutor``), on a real socket.
@Suite("A NIO connection's event loop as the link's executor")
struct EventLoopLinkExecutorTests {
    @Test("the link's scope and the child tasks it starts run on the connection's event loop")
    func runsOnTheEventLoop() async throws {
        try await withConnection { connection, loop in
            let executor = try #require(connection.linkExecutor)
            #expect(!loop.inEventLoop)
            let (inOperation, inChild, afterSuspension) = await executor.run { () -> (Bool, Bool, Bool) in
                let inChild = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { loop.inEventLoop }
                    return await group.next() ?? false
                }
                // A suspension that resumes from another thread comes back to the loop.
                try? await Task.sleep(for: .milliseconds(1))
                return (loop.inEventLoop, inChild, loop.inEventLoop)
            }
            #expect(inOperation)
            #expect(inChild)
            #expect(afterSuspension)
        }
    }

    @Test("a sleep on the loop's timer lasts its duration and resumes on the loop")
    func sleepsOnTheLoop() async throws {
        try await withConnection { connection, loop in
            let executor = try #require(connection.linkExecutor)
            try await expectSleepLastsOnLoop(executor, loop) { try await executor.sleep(for: $0) }
        }
    }

    @Test("a cancelled sleep ends at once with CancellationError, and so does one started after the cancellation")
    func cancelledSleepThrows() async throws {
        try await withConnection { connection, _ in
            let executor = try #require(connection.linkExecutor)
            // Usually under way after 20 ms; either order must throw.
            try await expectCancelledSleepsThrow(
                { try await executor.sleep(for: $0) }, underWay: { try await Task.sleep(for: .milliseconds(20)) })
        }
    }

    #if os(Linux)
    @Test("on Linux the link gets a timer of its own on the loop: a sleep lasts its duration and resumes on the loop")
    func ownTimerSleeps() async throws {
        try await withOwnTimer { executor, timer, loop in
            try await expectSleepLastsOnLoop(executor, loop) { try await timer.sleep(for: $0) }
        }
    }

    @Test("rescheduling the link's own timer later keeps it asleep through the first deadline")
    func ownTimerMovesLater() async throws {
        try await withOwnTimer { executor, timer, loop in
            // The loop is held until the timer is re-armed, so the first deadline cannot end the sleep before the test
            // sees it waiting (under load the 50 ms were over before it looked, and the wait never ended: CI,
            // 2026-11-28). An expiry the loop has not read yet is dropped by the re-arm (`timerfd_settime` resets it).
            let release = DispatchSemaphore(value: 0)
            defer { release.signal() }  // a second signal is harmless: the loop waits once
            loop.execute { release.wait() }
            let start = ContinuousClock.now
            let sleeping = Task { try await timer.sleep(for: .milliseconds(50)) }
            try await waitUntil("the sleep waits for the timer") { timer.hasSleeper }
            try await Task.sleep(for: .milliseconds(60))  // past the first deadline, with its expiry left unread
            timer.reschedule(after: .milliseconds(400))
            release.signal()
            let outcome = try await withSmokeTimeout(10, "the rescheduled sleep") { await sleeping.result }
            try outcome.get()
            #expect(ContinuousClock.now - start >= .milliseconds(400))
        }
    }

    @Test("a cancelled sleep on the link's own timer throws at once, and the timer sleeps again afterwards")
    func ownTimerCancels() async throws {
        try await withOwnTimer { executor, timer, _ in
            try await expectCancelledSleepsThrow(
                { try await timer.sleep(for: $0) }, underWay: { try await waitUntil("the sleep waits for the timer") { timer.hasSleeper } })
            let start = ContinuousClock.now
            try await withSmokeTimeout(10, "a sleep after the cancellations") { try await timer.sleep(for: .milliseconds(10)) }
            #expect(ContinuousClock.now - start >= .milliseconds(10))
        }
    }

    @Test("cancelling a sleep that another took over does not end the one that took over")
    func ownTimerCancelsOnlyItsOwnSleep() async throws {
        try await withOwnTimer { executor, timer, loop in
            let first = Task { await executor.run { (try? await timer.sleep(for: .seconds(3600))) != nil } }
            try await waitUntil("the first sleep waits") { timer.waitingSleep == 1 }
            // The loop is held, so the first sleep, resumed when the second takes over, cannot leave its cancellation
            // handler's scope before it is cancelled.
            let release = DispatchSemaphore(value: 0)
            loop.execute { release.wait() }
            let second = Task { try await timer.sleep(for: .seconds(3600)) }
            try await waitUntil("the second sleep takes over") { timer.waitingSleep == 2 }
            first.cancel()
            #expect(timer.waitingSleep == 2, "the first sleep's cancellation ended the second")
            release.signal()
            let firstEnded = try await withSmokeTimeout(10, "the first sleep") { await first.value }
            #expect(firstEnded, "the first sleep ends normally when another takes over")
            second.cancel()
            let outcome = try await withSmokeTimeout(10, "the second sleep") { await second.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }

    @Test("closing the link's own timer ends its sleep, and later sleeps fall back to the loop's timers")
    func ownTimerCloses() async throws {
        try await withOwnTimer { _, timer, _ in
            let sleeping = Task { try await timer.sleep(for: .seconds(3600)) }
            try await waitUntil("the sleep waits for the timer") { timer.hasSleeper }
            timer.close()
            let outcome = try await withSmokeTimeout(10, "the hour-long sleep of a closed timer") { await sleeping.result }
            try outcome.get()
            timer.reschedule(after: .milliseconds(1))  // a closed timer arms nothing
            let start = ContinuousClock.now
            try await withSmokeTimeout(10, "a sleep on the closed timer") { try await timer.sleep(for: .milliseconds(30)) }
            #expect(ContinuousClock.now - start >= .milliseconds(30))
        }
    }
    /// `body` with a connection's executor, the link timer it makes (closed afterwards; closing twice is harmless) and
    /// its loop.
    private func withOwnTimer(
        _ body: @escaping @Sendable (any LinkExecutor, TimerFDLinkTimer, any EventLoop) async throws -> Void
    ) async throws {
        try await withConnection { connection, loop in
            let executor = try #require(connection.linkExecutor)
            let timer = try #require(await executor.makeTimer() as? TimerFDLinkTimer)
            defer { timer.close() }
            try await body(executor, timer, loop)
        }
    }
    #endif

    @Test("a connector told not to run links on its event loop offers no executor")
    func optOut() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedNIOWebSocketServer.start()
        let connector = NIOWebSocketConnector(closeTimeout: .seconds(2), eventLoopGroup: group, runsLinksOnEventLoop: false)
        let offered = try await connector.withConnection(WebSocketRequest(url: server.url)) { $0.linkExecutor != nil }
        await server.shutdown()
        try await group.shutdownGracefully()
        #expect(!offered.value)
    }

    /// A 50 ms `sleep` run on `executor` lasts at least 50 ms and resumes on `loop`.
    private func expectSleepLastsOnLoop(
        _ executor: any LinkExecutor, _ loop: any EventLoop, _ sleep: @escaping @Sendable (Duration) async throws -> Void
    ) async throws {
        let (slept, onLoop) = try await withSmokeTimeout(10, "a 50 ms sleep on the event loop") {
            await executor.run { () -> (Duration, Bool) in
                let start = ContinuousClock.now
                try? await sleep(.milliseconds(50))
                return (ContinuousClock.now - start, loop.inEventLoop)
            }
        }
        #expect(slept >= .milliseconds(50))
        #expect(onLoop)
    }

    /// An hour-long `sleep` cancelled once `underWay` returns throws `CancellationError` at once, and so does one started
    /// in a task cancelled before it.
    private func expectCancelledSleepsThrow(
        _ sleep: @escaping @Sendable (Duration) async throws -> Void, underWay: () async throws -> Void
    ) async throws {
        let sleeping = Task { try await sleep(.seconds(3600)) }
        try await underWay()
        sleeping.cancel()
        let outcome = try await withSmokeTimeout(10, "the cancelled hour-long sleep") { await sleeping.result }
        #expect(throws: CancellationError.self) { try outcome.get() }

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await sleep(.seconds(3600))
        }
        let second = try await withSmokeTimeout(10, "a sleep started cancelled") { await cancelledFirst.result }
        #expect(throws: CancellationError.self) { try second.get() }
    }

    /// A connection on a one-thread group (so the test knows its loop) to a scripted server.
    private func withConnection(
        _ body: @escaping @Sendable (any WebSocketConnection, any EventLoop) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let server = try await ScriptedNIOWebSocketServer.start()
        let connector = NIOWebSocketConnector(closeTimeout: .seconds(2), eventLoopGroup: group)
        do {
            _ = try await withSmokeTimeout(20, "the connection scope") {
                try await connector.withConnection(WebSocketRequest(url: server.url)) { connection in try await body(connection, loop) }
            }
        } catch {
            await server.shutdown()
            try await group.shutdownGracefully()
            throw error
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
