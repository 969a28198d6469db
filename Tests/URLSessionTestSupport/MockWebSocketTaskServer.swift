import Foundation
import RealtimeTesting
import SubscriberCore
import WebSocketURLSession

/// Hands out a ``MockWebSocketTask`` per connection of a ``URLSessionWebSocketConnector``, so a transport, a notifier
/// or a whole stack runs on the URLSession connector over Apple-like tasks; tests pick the tasks up in order.
public final class MockWebSocketTaskServer: Sendable {
    private struct State {
        var tasks: [MockWebSocketTask] = []
        var handedOut = 0
    }

    private let makeTask: @Sendable (WebSocketRequest) -> MockWebSocketTask
    private let state = Locked(State())

    /// Creates a server whose connections get the task `makeTask` makes for their request.
    public init(makeTask: @escaping @Sendable (WebSocketRequest) -> MockWebSocketTask) {
        self.makeTask = makeTask
    }

    /// A server that speaks each request's protocol just far enough to make its subscriptions live, then stays silent:
    /// no frame, no pong, and no answer to a close frame (see ``MockWebSocketTask/silentProtocolServer(for:)``).
    public static func silentAfterSubscribing() -> MockWebSocketTaskServer {
        MockWebSocketTaskServer { request in
            MockWebSocketTask(
                upgrade: .acceptOffered, answersClose: false, answersPings: false,
                respond: MockWebSocketTask.silentProtocolServer(for: request))
        }
    }

    /// A connector whose connections run on this server's tasks.
    public func connector(closeTimeout: Duration = .seconds(1)) -> URLSessionWebSocketConnector {
        URLSessionWebSocketConnector(
            closeTimeout: closeTimeout,
            makeTask: { [self] request in
                let task = makeTask(request)
                task.made(with: request)
                state.withLock { $0.tasks.append(task) }
                return task
            })
    }

    /// Every task made so far, in order.
    public var tasks: [MockWebSocketTask] { state.withLock { $0.tasks } }

    /// The next task not yet handed to the test, waiting for it if needed.
    public func nextTask(timeout: Double = scriptedWait) async throws -> MockWebSocketTask {
        try await withTestTimeout(timeout, "the client to open a task") { [state] in
            while true {
                let next: MockWebSocketTask? = state.withLock { state in
                    guard state.handedOut < state.tasks.count else { return nil }
                    defer { state.handedOut += 1 }
                    return state.tasks[state.handedOut]
                }
                if let next { return next }
                try await TestTime.pollPause()
            }
        }
    }
}

extension MockWebSocketTask {
    /// The server side of the request's protocol, as far as making subscriptions live: AppSync Events answers
    /// `connection_init` with `connection_ack` and each `subscribe` with `subscribe_success`; graphql-transport-ws
    /// answers `connection_init` with `connection_ack` (its subscriptions are live once the confirmation window passes
    /// without an error). Nothing else is ever answered.
    public static func silentProtocolServer(for request: WebSocketRequest) -> Responder {
        let appSync = request.requiredSubprotocol == "aws-appsync-event-ws"
        return { message in
            guard case .text(let text) = message,
                let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                let type = object["type"] as? String
            else { return [] }
            switch type {
            case "connection_init" where appSync:
                return [.text(#"{"type":"connection_ack","connectionTimeoutMs":300000}"#)]
            case "connection_init":
                return [.text(#"{"type":"connection_ack"}"#)]
            case "subscribe" where appSync:
                guard let id = object["id"] as? String else { return [] }
                return [.text(#"{"type":"subscribe_success","id":"\#(id)"}"#)]
            default:
                return []
            }
        }
    }
}
