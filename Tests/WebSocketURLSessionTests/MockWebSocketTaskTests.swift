import Foundation
import RealtimeTesting
import SubscriberCore
import Testing
import URLSessionTestSupport

/// The mock stays as hostile as Apple's task: each behaviour it models (with its source in ``MockWebSocketTask``'s
/// documentation) is pinned here, so a kinder mock cannot hide a stall from the connector's tests.
@Suite("MockWebSocketTask behaves like URLSessionWebSocketTask")
struct MockWebSocketTaskTests {
    private let request = WebSocketRequest(url: URL(string: "wss://example.com/event/realtime")!, subprotocols: ["p"])

    private func opened(answersClose: Bool = true, answersPings: Bool = true) async throws -> MockWebSocketTask {
        let task = MockWebSocketTask(upgrade: .acceptOffered, answersClose: answersClose, answersPings: answersPings)
        task.made(with: request)
        #expect(try await task.resume() == "p")
        return task
    }

    @Test("receive ignores Swift cancellation: a cancelled receiver still waits, and only cancel() ends it")
    func receiveIgnoresCancellation() async throws {
        let task = try await opened()
        let ended = OneShotSignal<Void>()
        let receiver = Task {
            defer { ended.fire() }
            return try await task.receive()
        }
        await task.waitForReceiver()
        receiver.cancel()
        // The receiver is deaf to its cancellation: a frame still reaches it.
        task.serverSends(.text("after the cancel"))
        #expect(try await receiver.boundedValue() == .text("after the cancel"))
        #expect(ended.isFired)

        // cancel() ends a receive, pending or later.
        task.cancel()
        await #expect(throws: MockWebSocketTask.MockError.self) { try await task.receive() }
    }

    @Test("a close frame the server never answers leaves a pending receive and completion() waiting; cancel() ends both")
    func unansweredCloseEndsNothing() async throws {
        let task = try await opened(answersClose: false)
        let receiver = Task { try await task.receive() }
        await task.waitForReceiver()
        task.cancel(with: 1000, reason: nil)
        let completion = Task { await task.completion() }
        // The receive and the completion still wait; sends fail once closing.
        await #expect(throws: MockWebSocketTask.MockError.self) { try await task.send(.text("late")) }
        task.cancel()
        await #expect(throws: MockWebSocketTask.MockError.self) { try await receiver.boundedValue() }
        #expect(await completion.value.code == nil)
    }

    @Test(
        "a failure without a close frame (CFNetwork's) reports the end but answers no pending or later receive, cancel() neither"
    )
    func failureLikeCFNetworkLeavesReceivesUnanswered() async throws {
        let task = try await opened()
        let answers = Locked<[String]>([])
        let record: @Sendable (Result<WebSocketMessage, any Error>) -> Void = { result in
            answers.withLock { $0.append((try? result.get()).map { "\($0)" } ?? "error") }
        }
        task.serverSends(.text("read before the end"))
        task.receive(completionHandler: record)
        task.receive(completionHandler: record)
        await task.waitForReceiver()
        task.serverFailsLikeCFNetwork("The network connection was lost.")
        let end = try await Task { await task.completion() }.boundedValue()
        #expect(end == WebSocketCloseInfo(code: nil, reason: "The network connection was lost."))
        task.receive(completionHandler: record)
        task.cancel()
        #expect(answers.withLock { $0 } == ["\(WebSocketMessage.text("read before the end"))"])
        #expect(task.unansweredReceiveCount == 2)
        #expect(task.dropCount == 1)
        // Nothing orders a late answer before the end: the test can play one.
        #expect(task.deliverAfterEnd(.text("late")))
        #expect(answers.withLock { $0 }.last == "\(WebSocketMessage.text("late"))")
        #expect(task.unansweredReceiveCount == 1)
    }

    @Test(
        "a send a server that stopped reading holds ignores Swift cancellation and cancel() fails it; after a failure that loses sends (CFNetwork's), none pending or later is answered, cancel() neither"
    )
    func sendsLostLikeCFNetwork() async throws {
        let held = try await opened()
        held.serverStopsReading()
        let sender = Task { try await held.send(.text("held")) }
        try await waitUntil("the send to be held") { held.pendingSendCount == 1 }
        sender.cancel()
        #expect(held.pendingSendCount == 1, "Swift cancellation does not end the send")
        held.cancel()
        await #expect(throws: MockWebSocketTask.MockError.self) { try await sender.boundedValue() }
        #expect(held.sentMessages.isEmpty, "the server never read it")

        let task = try await opened()
        let answers = Locked<[String]>([])
        let record: @Sendable (String) -> @Sendable ((any Error)?) -> Void = { name in
            { error in answers.withLock { $0.append("\(name): \(error == nil ? "sent" : "error")") } }
        }
        task.send(.text("read"), completionHandler: record("read"))
        task.serverStopsReading()
        task.send(.text("pending"), completionHandler: record("pending"))
        task.serverFailsLikeCFNetwork("The network connection was lost.", sendsNeverComplete: true)
        task.send(.text("later"), completionHandler: record("later"))
        task.cancel()
        #expect(answers.withLock { $0 } == ["read: sent"])
        #expect(task.unansweredSendCount == 2)
        #expect(task.pendingSendCount == 0)
        #expect(task.sentMessages == [.text("read")])
    }

    @Test("each ping's handler is called exactly once: nil for a pong, an error when the task ends first")
    func pingHandlersExactlyOnce() async throws {
        let task = try await opened(answersPings: false)
        let calls = Locked<[String]>([])
        for index in 0..<3 {
            task.sendPing { error in calls.withLock { $0.append("\(index):\(error == nil ? "pong" : "error")") } }
        }
        task.answerPings()
        task.sendPing { error in calls.withLock { $0.append("3:\(error == nil ? "pong" : "error")") } }
        task.cancel()
        task.answerPings()
        task.sendPing { error in calls.withLock { $0.append("4:\(error == nil ? "pong" : "error")") } }
        #expect(calls.withLock { $0 } == ["0:pong", "1:pong", "2:pong", "3:error", "4:error"])
    }
}
