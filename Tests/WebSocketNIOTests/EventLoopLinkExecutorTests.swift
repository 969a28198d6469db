import Foundation
import NIOCore
import NIOPosix
import SubscriberCore
import Testing
import WebSocketNIO

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
            let (slept, onLoop) = try await withSmokeTimeout(10, "a 50 ms sleep on the event loop") {
                await executor.run { () -> (Duration, Bool) in
                    let start = ContinuousClock.now
                    try? await executor.sleep(for: .milliseconds(50))
                    return (ContinuousClock.now - start, loop.inEventLoop)
                }
            }
            #expect(slept >= .milliseconds(50))
            #expect(onLoop)
        }
    }

    @Test("a cancelled sleep ends at once with CancellationError, and so does one started after the cancellation")
    func cancelledSleepThrows() async throws {
        try await withConnection { connection, _ in
            let executor = try #require(connection.linkExecutor)
            let sleeping = Task { try await executor.sleep(for: .seconds(3600)) }
            try await Task.sleep(for: .milliseconds(20))  // usually under way by now; either order must throw
            sleeping.cancel()
            let outcome = try await withSmokeTimeout(10, "the cancelled hour-long sleep") { await sleeping.result }
            #expect(throws: CancellationError.self) { try outcome.get() }

            let cancelledFirst = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await executor.sleep(for: .seconds(3600))
            }
            let second = try await withSmokeTimeout(10, "a sleep started cancelled") { await cancelledFirst.result }
            #expect(throws: CancellationError.self) { try second.get() }
        }
    }

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
