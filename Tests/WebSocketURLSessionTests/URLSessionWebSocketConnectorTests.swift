import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import WebSocketURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``URLSessionWebSocketConnector`` over a ``MockWebSocketTask`` that plays the server, so the connector's mapping of
/// the seam (upgrade, subprotocol, messages, close codes, abort, refusals, cancellation) runs on Linux too.
@Suite("URLSessionWebSocketConnector over a mock task")
struct URLSessionWebSocketConnectorTests {
    private let url = URL(string: "wss://example.appsync-realtime-api.us-east-1.amazonaws.com/event/realtime")!

    private func connector(
        _ task: MockWebSocketTask, closeTimeout: Duration = .seconds(5)
    ) -> URLSessionWebSocketConnector {
        URLSessionWebSocketConnector(
            closeTimeout: closeTimeout,
            makeTask: { request in
                task.made(with: request)
                return task
            })
    }

    // MARK: Upgrade request and subprotocol

    @Test("the upgrade request carries the URL, the offered subprotocols in one header and the extra headers")
    func upgradeRequest() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: "aws-appsync-event-ws"))
        let subprotocols = ["aws-appsync-event-ws", "header-eyJob3N0IjoiZXhhbXBsZSJ9"]
        let request = WebSocketRequest(
            url: url,
            subprotocols: subprotocols,
            headers: [
                HTTPHeaderField(name: "X-Api-Key", value: "da2-key"),
                HTTPHeaderField(name: "X-Trace", value: "trace-1"),
            ]
        )
        let result = try await connector(task).withConnection(request) { connection in
            connection.negotiatedSubprotocol
        }

        let sent = try #require(task.request)
        #expect(sent.url == url)
        #expect(sent.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") == subprotocols.joined(separator: ", "))
        #expect(sent.value(forHTTPHeaderField: "X-Api-Key") == "da2-key")
        #expect(sent.value(forHTTPHeaderField: "X-Trace") == "trace-1")
        #expect(task.resumeCount == 1)
        #expect(result.value == "aws-appsync-event-ws")
    }

    @Test("without subprotocols no Sec-WebSocket-Protocol header is sent")
    func noSubprotocolHeader() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            connection.negotiatedSubprotocol
        }
        #expect(try #require(task.request).value(forHTTPHeaderField: "Sec-WebSocket-Protocol") == nil)
        #expect(result.value == nil)
    }

    @Test(
        "the server's choice of subprotocol is reported; an empty choice is none",
        arguments: [
            ("graphql-transport-ws", "graphql-transport-ws"),
            ("", nil),
        ] as [(String, String?)])
    func negotiatedSubprotocol(selected: String, expected: String?) async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: selected))
        let request = WebSocketRequest(url: url, subprotocols: ["graphql-transport-ws", "graphql-ws"])
        let result = try await connector(task).withConnection(request) { connection in
            connection.negotiatedSubprotocol
        }
        #expect(result.value == expected)
    }

    @Test("a URL that is not ws or wss is refused before any task is made, without its query")
    func invalidURL() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connector(task).withConnection(
                WebSocketRequest(url: URL(string: "https://example.com/path?token=secret")!)
            ) { _ in }
        }
        guard case .invalidURL(let detail)? = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
        #expect(!detail.contains("secret"))
        #expect(task.request == nil)
    }

    // MARK: Messages

    @Test("text and binary messages pass both ways in order")
    func messagesBothWays() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        task.serverSends(.text("alpha"))
        task.serverSends(.binary(Data([9, 8, 7])))
        task.serverSends(.text("beta"))
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            try await connection.send(.text("one"))
            try await connection.send(.binary(Data([0, 1, 255])))
            try await connection.send(.text("two"))
            return [try await connection.receive(), try await connection.receive(), try await connection.receive()]
        }
        #expect(result.value == [.text("alpha"), .binary(Data([9, 8, 7])), .text("beta")])
        #expect(task.sentMessages == [.text("one"), .binary(Data([0, 1, 255])), .text("two")])
    }

    // MARK: Pings

    @Test("a ping goes through the task; its pong reaches the pong handler, a failed ping reports nothing")
    func pingsThroughTheTask() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersPings: false)
        let pongs = Locked(0)
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            connection.onPong { pongs.withLock { $0 += 1 } }
            let sent = [connection.sendPing(), connection.sendPing()]
            task.answerPings()
            let afterPongs = pongs.withLock { $0 }
            #expect(connection.sendPing())
            task.answerPings(with: WebSocketSeamError.notConnected)
            return (sent, afterPongs)
        }
        #expect(result.value.0 == [true, true])
        #expect(result.value.1 == 2, "one pong per answered ping")
        #expect(task.pingCount == 3)
        #expect(pongs.withLock { $0 } == 2, "a ping that failed is no pong")
    }

    @Test("a task without ping support (the protocol's default) never reports a pong; after the end no ping is sent")
    func taskWithoutPings() async throws {
        let task = LegacyWebSocketTask(MockWebSocketTask(upgrade: .accept(subprotocol: nil)))
        let pongs = Locked(0)
        let connector = URLSessionWebSocketConnector(makeTask: { _ in task })
        _ = try await connector.withConnection(WebSocketRequest(url: url)) { connection in
            connection.onPong { pongs.withLock { $0 += 1 } }
            #expect(connection.sendPing())
        }
        #expect(pongs.withLock { $0 } == 0)

        let counted = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        _ = try await self.connector(counted).withConnection(WebSocketRequest(url: url)) { connection in
            await connection.close(code: 1000, reason: "")
            #expect(connection.sendPing(), "a closed connection just gets no pong")
        }
        #expect(counted.pingCount == 0)
    }

    // MARK: Close codes

    @Test("the server's close code and reason surface in the scope result", arguments: [1000, 1001, 1011, 4400, 4406] as [UInt16])
    func serverCloseCode(code: UInt16) async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        task.serverSends(.text("last"))
        task.serverCloses(code: code, reason: "server says \(code)")
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            var received: [WebSocketMessage] = []
            while let message = try await connection.receive() { received.append(message) }
            // The peer closed: sending is over, and a later receive still reports the end.
            await #expect(throws: WebSocketSeamError.notConnected) { try await connection.send(.text("late")) }
            let afterEnd = try await connection.receive()
            #expect(afterEnd == nil)
            return received
        }
        #expect(result.value == [.text("last")])
        #expect(result.close == WebSocketCloseInfo(code: code, reason: "server says \(code)", initiatedLocally: false))
        // The client did not send a close frame of its own after the server's.
        #expect(task.clientCloses.isEmpty)
    }

    @Test("a transport failure without a close frame surfaces as no code (1006) with the failure as reason")
    func transportFailure() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        task.serverFails("connection reset by peer")
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            try await connection.receive()
        }
        #expect(result.value == nil)
        #expect(result.close.code == nil)
        #expect(result.close.effectiveCode == 1006)
        #expect(result.close.reason.contains("connection reset by peer"))
        #expect(!result.close.initiatedLocally)
    }

    @Test("close sends the local code and reason; reading and sending end", arguments: [1000, 4000, 4499] as [UInt16])
    func localClose(code: UInt16) async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            await connection.close(code: code, reason: "bye")
            let afterClose = try await connection.receive()
            #expect(afterClose == nil)
            await #expect(throws: WebSocketSeamError.notConnected) { try await connection.send(.text("late")) }
            // A second close sends nothing more.
            await connection.close(code: 1001, reason: "again")
        }
        #expect(task.clientCloses == [MockWebSocketTask.ClientClose(code: Int(code), reason: "bye")])
        #expect(result.close == WebSocketCloseInfo(code: code, reason: "bye", initiatedLocally: true))
        #expect(task.dropCount == 0)
    }

    @Test("a scope that neither closes nor aborts closes with 1000")
    func implicitClose() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { _ in 42 }
        #expect(result.value == 42)
        #expect(task.clientCloses == [MockWebSocketTask.ClientClose(code: 1000, reason: nil)])
        #expect(result.close == WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true))
    }

    @Test("what the scope throws is rethrown after the connection was closed with 1000")
    func bodyThrows() async throws {
        struct BodyFailed: Error, Equatable {}
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        await #expect(throws: BodyFailed()) {
            _ = try await connector(task).withConnection(WebSocketRequest(url: url)) { _ in throw BodyFailed() }
        }
        #expect(task.clientCloses == [MockWebSocketTask.ClientClose(code: 1000, reason: nil)])
    }

    @Test("a peer that never answers the close is dropped after the close timeout")
    func closeTimeoutBounded() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersClose: false)
        let result = try await withTestTimeout(30, "the scope to end after the close timeout") {
            try await connector(task, closeTimeout: .milliseconds(20)).withConnection(WebSocketRequest(url: url)) {
                connection in await connection.close(code: 1000, reason: "")
            }
        }
        #expect(task.clientCloses == [MockWebSocketTask.ClientClose(code: 1000, reason: nil)])
        #expect(task.dropCount == 1)
        #expect(result.close == WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true))
    }

    // MARK: Abort

    @Test("abort drops the task at once: a pending receive returns nil, no close frame, nothing awaited")
    func abortDropsAtOnce() async throws {
        // A task that never reports its end and a close timeout far beyond the hang guard: any wait after the abort
        // would fail the test.
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersClose: false, reportsEnd: false)
        let result = try await withTestTimeout(30, "the scope to end after an abort") {
            try await connector(task, closeTimeout: .seconds(3600)).withConnection(WebSocketRequest(url: url)) {
                connection in
                async let pending = connection.receive()
                await task.waitForReceiver()
                connection.abort()
                let afterAbort = try await pending
                await #expect(throws: WebSocketSeamError.notConnected) { try await connection.send(.text("late")) }
                return afterAbort
            }
        }
        #expect(result.value == nil)
        #expect(task.dropCount >= 1)
        #expect(task.clientCloses.isEmpty)
        #expect(result.close == WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true))
    }

    // MARK: Refusals and failures at the upgrade

    @Test("HTTP 401 and 403 at the upgrade are auth refusals; the scope never runs", arguments: [401, 403])
    func authRefusal(status: Int) async throws {
        let task = MockWebSocketTask(upgrade: .refuse(status: status))
        let ran = Locked(false)
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connector(task).withConnection(WebSocketRequest(url: url)) { _ in
                ran.withLock { $0 = true }
            }
        }
        guard case .upgradeRejected(let detail)? = error else {
            Issue.record("expected upgradeRejected, got \(String(describing: error))")
            return
        }
        #expect(detail.hasPrefix("HTTP \(status) "))
        #expect(error?.isAuthenticationRejection == true)
        #expect(!ran.withLock { $0 })
        #expect(task.dropCount >= 1)
    }

    @Test("other refusals are upgrade rejections but not auth refusals")
    func otherRefusal() async throws {
        let task = MockWebSocketTask(upgrade: .refuse(status: 404))
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connector(task).withConnection(WebSocketRequest(url: url)) { _ in }
        }
        guard case .upgradeRejected(let detail)? = error else {
            Issue.record("expected upgradeRejected, got \(String(describing: error))")
            return
        }
        #expect(detail.hasPrefix("HTTP 404 "))
        #expect(error?.isAuthenticationRejection == false)
    }

    @Test("the delegate's mapping: a status other than 101 is a refusal, no response a connection failure")
    func upgradeFailureMapping() {
        #expect(URLSessionWebSocketDelegateBridge.upgradeFailure(status: 401, error: nil).isAuthenticationRejection)
        #expect(URLSessionWebSocketDelegateBridge.upgradeFailure(status: 403, error: nil).isAuthenticationRejection)
        #expect(!URLSessionWebSocketDelegateBridge.upgradeFailure(status: 500, error: nil).isAuthenticationRejection)
        guard case .connectionFailed = URLSessionWebSocketDelegateBridge.upgradeFailure(status: nil, error: nil) else {
            Issue.record("no response must be a connection failure")
            return
        }
        guard case .connectionFailed = URLSessionWebSocketDelegateBridge.upgradeFailure(status: 101, error: nil) else {
            Issue.record("a 101 that still failed must be a connection failure")
            return
        }
    }

    @Test("a task that fails to open with a foreign error surfaces as connectionFailed")
    func foreignOpenError() async throws {
        struct SocketGone: Error {}
        let task = MockWebSocketTask(upgrade: .fail(SocketGone()))
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connector(task).withConnection(WebSocketRequest(url: url)) { _ in }
        }
        guard case .connectionFailed? = error else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
            return
        }
    }

    // MARK: Cancellation

    @Test("a caller cancelled while the upgrade is pending returns with CancellationError and the task is cancelled")
    func cancelledDuringUpgrade() async throws {
        let task = MockWebSocketTask(upgrade: .pending)
        try await cancelWhileUpgrading(task)
    }

    @Test("a caller cancelled during a stalled upgrade that ignores cancellation still returns")
    func cancelledDuringStalledUpgrade() async throws {
        let task = MockWebSocketTask(upgrade: .stall)
        defer { task.releaseStall() }
        try await cancelWhileUpgrading(task)
    }

    private func cancelWhileUpgrading(_ task: MockWebSocketTask) async throws {
        let ran = Locked(false)
        let connector = connector(task)
        let request = WebSocketRequest(url: url)
        let caller = Task {
            _ = try await connector.withConnection(request) { _ in ran.withLock { $0 = true } }
        }
        // Awaited through a signal, so a caller that hangs fails the hang guard instead of blocking the suite.
        let returned = OneShotSignal<Result<Void, any Error>>()
        Task { returned.fire(await caller.result) }
        await task.waitForResume()
        caller.cancel()
        let outcome = try await withTestTimeout(30, "the cancelled caller to return") { await returned.wait() }
        #expect(throws: CancellationError.self) { try #require(outcome).get() }
        #expect(!ran.withLock { $0 })
        #expect(task.dropCount >= 1)
    }

    // MARK: Platform default

    @Test(
        "without an injected task, connecting fails at once with unsupportedPlatform where URLSession has no WebSocket",
        .enabled(if: !URLSessionWebSocketConnector.supportsURLSessionWebSocketTasks)
    )
    func linuxDefaultIsUnsupported() async throws {
        let ran = Locked(false)
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await URLSessionWebSocketConnector().withConnection(WebSocketRequest(url: url)) { _ in
                ran.withLock { $0 = true }
            }
        }
        guard case .unsupportedPlatform(let detail)? = error else {
            Issue.record("expected unsupportedPlatform, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("FoundationNetworking"))
        #expect(detail.contains("NIOWebSocketConnector"))
        #expect(!ran.withLock { $0 })
    }

    @Test("the platform flag matches the platform")
    func platformFlag() {
        #if canImport(Darwin)
        #expect(URLSessionWebSocketConnector.supportsURLSessionWebSocketTasks)
        #else
        #expect(!URLSessionWebSocketConnector.supportsURLSessionWebSocketTasks)
        #endif
    }
}

// MARK: - The mock task

/// A ``WebSocketTask`` that plays the server: a scripted upgrade, scripted inbound messages and closes, and a record
/// of what the client sent and how it ended the task.
final class MockWebSocketTask: WebSocketTask {
    /// How the server answers the upgrade.
    enum Upgrade: Sendable {
        /// Switches protocols, selecting `subprotocol`.
        case accept(subprotocol: String?)
        /// Answers with an HTTP status (mapped as URLSession's delegate maps it).
        case refuse(status: Int)
        /// The task fails to open with this error.
        case fail(any Error)
        /// Never answers; cancelling the task fails the open (as URLSession does).
        case pending
        /// Never answers and ignores cancellation until ``releaseStall()``.
        case stall
    }

    /// A close frame the client sent.
    struct ClientClose: Sendable, Equatable {
        var code: Int
        var reason: String?
    }

    private enum Inbound: Sendable {
        case message(WebSocketMessage)
        case end
    }

    private struct MockError: Error, CustomStringConvertible {
        var description: String
    }

    private struct State {
        var request: URLRequest?
        var resumeCount = 0
        var sent: [WebSocketMessage] = []
        var clientCloses: [ClientClose] = []
        var dropCount = 0
        var failure: String?
        var closing = false
        var pings = 0
        var pendingPongs: [@Sendable ((any Error)?) -> Void] = []
    }

    private let upgrade: Upgrade
    private let answersPings: Bool
    private let answersClose: Bool
    private let reportsEnd: Bool
    private let state = Locked(State())
    private let inbound: AsyncStream<Inbound>.Continuation
    private let iterator: Locked<AsyncStream<Inbound>.AsyncIterator?>
    private let resumed = OneShotSignal<Void>()
    private let receiving = OneShotSignal<Void>()
    private let cancelled = OneShotSignal<Void>()
    private let stallReleased = OneShotSignal<Void>()
    private let ended = OneShotSignal<WebSocketCloseInfo>()

    /// Creates a task whose server answers the upgrade with `upgrade`; `answersClose` `false` makes a peer that never
    /// answers the client's close frame, `reportsEnd` `false` a task whose ``completion()`` never returns after a drop,
    /// `answersPings` `false` a server whose pongs wait for ``answerPings(with:)``.
    init(upgrade: Upgrade, answersClose: Bool = true, reportsEnd: Bool = true, answersPings: Bool = true) {
        self.upgrade = upgrade
        self.answersPings = answersPings
        self.answersClose = answersClose
        self.reportsEnd = reportsEnd
        let (stream, continuation) = AsyncStream<Inbound>.makeStream()
        inbound = continuation
        iterator = Locked(stream.makeAsyncIterator())
    }

    // MARK: The test's side

    /// Records the request the connector made the task with.
    func made(with request: URLRequest) { state.withLock { $0.request = request } }

    /// The upgrade request.
    var request: URLRequest? { state.withLock { $0.request } }
    /// How often the connector resumed the task.
    var resumeCount: Int { state.withLock { $0.resumeCount } }
    /// The messages the client sent, in order.
    var sentMessages: [WebSocketMessage] { state.withLock { $0.sent } }
    /// The close frames the client sent, in order.
    var clientCloses: [ClientClose] { state.withLock { $0.clientCloses } }
    /// How often the client dropped the task (`cancel()`).
    var dropCount: Int { state.withLock { $0.dropCount } }

    /// How many pings the client sent.
    var pingCount: Int { state.withLock { $0.pings } }

    /// Calls the handlers of the pings not answered yet, with `error` (`nil`: the pong arrived).
    func answerPings(with error: (any Error)? = nil) {
        let handlers = state.withLock { state in
            defer { state.pendingPongs = [] }
            return state.pendingPongs
        }
        for handler in handlers { handler(error) }
    }

    /// Queues a message from the server.
    func serverSends(_ message: WebSocketMessage) { inbound.yield(.message(message)) }

    /// The server closes with a close frame: queued messages are still read, then reading ends.
    func serverCloses(code: UInt16, reason: String) {
        ended.fire(WebSocketCloseInfo(code: code, reason: reason))
        inbound.yield(.end)
        inbound.finish()
    }

    /// The transport breaks without a close frame.
    func serverFails(_ reason: String) {
        state.withLock { $0.failure = reason }
        ended.fire(WebSocketCloseInfo(code: nil, reason: reason))
        inbound.yield(.end)
        inbound.finish()
    }

    /// Waits until the connector resumed the task.
    func waitForResume() async { _ = await resumed.wait() }

    /// Waits until a `receive()` is pending.
    func waitForReceiver() async { _ = await receiving.wait() }

    /// Lets a stalled upgrade end (it then fails).
    func releaseStall() { stallReleased.fire() }

    // MARK: The connector's side (WebSocketTask)

    func resume() async throws -> String? {
        state.withLock { $0.resumeCount += 1 }
        resumed.fire()
        switch upgrade {
        case .accept(let subprotocol):
            return subprotocol
        case .refuse(let status):
            throw URLSessionWebSocketDelegateBridge.upgradeFailure(status: status, error: nil)
        case .fail(let error):
            throw error
        case .pending:
            _ = await cancelled.wait()
            throw MockError(description: "cancelled during the upgrade")
        case .stall:
            // Deliberately deaf to cancellation: the connector must not depend on it.
            await Task.detached { [stallReleased] in _ = await stallReleased.wait() }.value
            throw MockError(description: "stalled upgrade released")
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        try state.withLock { state in
            guard !state.closing, !ended.isFired else { throw MockError(description: "not connected") }
            state.sent.append(message)
        }
    }

    func receive() async throws -> WebSocketMessage {
        guard
            var local = iterator.withLock({ state -> AsyncStream<Inbound>.AsyncIterator? in
                defer { state = nil }
                return state
            })
        else { throw MockError(description: "concurrent receive") }
        receiving.fire()
        let next = await local.next()
        iterator.withLock { $0 = local }
        switch next {
        case .message(let message)?:
            return message
        case .end?, nil:
            throw MockError(description: state.withLock { $0.failure } ?? "closed")
        }
    }

    func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) {
        let answerNow = state.withLock { state -> Bool in
            state.pings += 1
            if !answersPings { state.pendingPongs.append(pongReceiveHandler) }
            return answersPings
        }
        if answerNow { pongReceiveHandler(nil) }
    }

    func cancel(with closeCode: Int, reason: Data?) {
        state.withLock { state in
            state.closing = true
            state.clientCloses.append(ClientClose(code: closeCode, reason: reason.map { String(decoding: $0, as: UTF8.self) }))
        }
        inbound.finish()
        if answersClose {
            ended.fire(WebSocketCloseInfo(code: UInt16(clamping: closeCode), reason: ""))
        }
    }

    func cancel() {
        state.withLock { state in
            state.closing = true
            state.dropCount += 1
        }
        cancelled.fire()
        inbound.finish()
        if reportsEnd { ended.fire(WebSocketCloseInfo(code: nil, reason: "cancelled")) }
    }

    func completion() async -> WebSocketCloseInfo {
        await ended.wait() ?? WebSocketCloseInfo(code: nil, reason: "no longer awaited")
    }
}

/// A task written before pings joined the seam: everything but `sendPing` forwards to a mock; `sendPing` is the
/// protocol's default.
final class LegacyWebSocketTask: WebSocketTask {
    private let base: MockWebSocketTask

    init(_ base: MockWebSocketTask) { self.base = base }

    func resume() async throws -> String? { try await base.resume() }
    func send(_ message: WebSocketMessage) async throws { try await base.send(message) }
    func receive() async throws -> WebSocketMessage { try await base.receive() }
    func cancel(with closeCode: Int, reason: Data?) { base.cancel(with: closeCode, reason: reason) }
    func cancel() { base.cancel() }
    func completion() async -> WebSocketCloseInfo { await base.completion() }
}
