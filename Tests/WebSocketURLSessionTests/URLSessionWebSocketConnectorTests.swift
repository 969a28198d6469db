import Foundation
import RealtimeTesting
import SubscriberCore
import Testing
import URLSessionTestSupport

@testable import WebSocketURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``URLSessionWebSocketConnector`` over a ``MockWebSocketTask`` that plays the server as hostile as Apple's task (it
/// ignores Swift cancellation and may never answer a close), so the connector's mapping of the seam (upgrade,
/// subprotocol, messages, close codes, abort, refusals, cancellation) runs on Linux too.
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

    @Test("the task is made from the request: the URL, the offered subprotocols (advertised, not a header) and the headers")
    func taskRequest() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: "aws-appsync-event-ws"))
        let subprotocols = ["aws-appsync-event-ws", "header-eyJob3N0IjoiZXhhbXBsZSJ9"]
        let request = WebSocketRequest(
            url: url,
            subprotocols: subprotocols,
            requiredSubprotocol: "aws-appsync-event-ws",
            headers: [
                HTTPHeaderField(name: "X-Api-Key", value: "da2-key"),
                HTTPHeaderField(name: "X-Trace", value: "trace-1"),
            ]
        )
        let result = try await connector(task).withConnection(request) { connection in
            connection.negotiatedSubprotocol
        }

        #expect(task.request == request)
        #expect(task.resumeCount == 1)
        #expect(result.value == "aws-appsync-event-ws")
    }

    @Test("the request's headers join the session's additional headers; repeated names are joined with a comma")
    func additionalHeaders() {
        let fields = [
            HTTPHeaderField(name: "X-Api-Key", value: "da2-key"),
            HTTPHeaderField(name: "X-Trace", value: "one"),
            HTTPHeaderField(name: "X-Trace", value: "two"),
        ]
        let headers = URLSessionWebSocketTaskAdapter.additionalHeaders(fields, over: ["User-Agent": "app/1"])
        #expect(headers?["X-Api-Key"] as? String == "da2-key")
        #expect(headers?["X-Trace"] as? String == "one, two")
        #expect(headers?["User-Agent"] as? String == "app/1")
        #expect(URLSessionWebSocketTaskAdapter.additionalHeaders([], over: nil) == nil)
    }

    @Test("a task that advertised no subprotocols reports none, whatever the server says (didOpenWithProtocol's rule)")
    func noSubprotocolAdvertised() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: "graphql-transport-ws"))
        let result = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            connection.negotiatedSubprotocol
        }
        #expect(task.request?.subprotocols == [])
        #expect(result.value == nil)
    }

    @Test(
        "a server that did not select the required subprotocol fails the connection, naming both; the scope never runs",
        arguments: [("graphql-ws", "graphql-ws"), ("", nil), (nil, nil)] as [(String?, String?)])
    func requiredSubprotocolNotSelected(selected: String?, reported: String?) async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: selected))
        let ran = Locked(false)
        let request = WebSocketRequest(
            url: url, subprotocols: ["graphql-transport-ws", "graphql-ws"], requiredSubprotocol: "graphql-transport-ws")
        let error = await #expect(throws: WebSocketSeamError.self) {
            _ = try await connector(task).withConnection(request) { _ in ran.withLock { $0 = true } }
        }
        #expect(error == .subprotocolNotSelected(required: "graphql-transport-ws", selected: reported))
        #expect(error?.description.contains("graphql-transport-ws") == true)
        #expect(error?.description.contains(reported ?? "none") == true)
        #expect(!ran.withLock { $0 })
        #expect(task.dropCount == 1)
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

    @Test(
        "a task without a completion-handler receive and send (the protocol's defaults) still sends, and delivers its messages and its end"
    )
    func taskWithoutCompletionHandlerReceive() async throws {
        let base = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        let task = LegacyWebSocketTask(base)
        base.serverSends(.text("one"))
        base.serverSends(.text("two"))
        let result = try await withTestTimeout(30, "the legacy task's messages") {
            try await URLSessionWebSocketConnector(makeTask: { _ in task }).withConnection(WebSocketRequest(url: url)) {
                connection in
                try await connection.send(.text("out"))
                base.serverCloses(code: 4400, reason: "bye")
                var received: [WebSocketMessage] = []
                while let message = try await connection.receive() { received.append(message) }
                return received
            }
        }
        #expect(base.sentMessages == [.text("out")])
        #expect(result.value == [.text("one"), .text("two")])
        #expect(result.close == WebSocketCloseInfo(code: 4400, reason: "bye", initiatedLocally: false))
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

    @Test("a receive pending when the connection fails without a close frame returns nil, though CFNetwork never answers it")
    func failureLikeCFNetworkEndsThePendingReceive() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        // A close timeout far beyond the hang guard: the end must not wait for the unanswered receive either.
        let result = try await withTestTimeout(10, "the pending receive to end") {
            try await connector(task, closeTimeout: .seconds(3600)).withConnection(WebSocketRequest(url: url)) { connection in
                async let pending = connection.receive()
                await task.waitForReceiver()
                task.serverFailsLikeCFNetwork("The network connection was lost.")
                let first = try await pending
                let later = try await connection.receive()
                return [first, later]
            }
        }
        #expect(result.value == [nil, nil])
        #expect(result.close == WebSocketCloseInfo(code: nil, reason: "The network connection was lost.", initiatedLocally: false))
        #expect(task.unansweredReceiveCount == 1)
        #expect(task.dropCount == 1, "the unanswered receive was dropped at the scope's end, the only end the seam promises")
    }

    @Test("a message CFNetwork hands to the pending receive right after reporting the end is still delivered")
    func messageRightAfterTheEnd() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        var patient = connector(task, closeTimeout: .seconds(3600))
        // Long enough that no scheduling delay between seeing the end and the late message matters.
        patient.receiveGraceAfterEnd = .seconds(2)
        let result = try await withTestTimeout(30, "the receives after the end to return") { [patient] in
            try await patient.withConnection(WebSocketRequest(url: url)) { connection in
                async let pending = connection.receive()
                await task.waitForReceiver()
                task.serverFailsLikeCFNetwork("The network connection was lost.")
                // The connection has seen the end before the message comes.
                let seen = try #require(connection as? URLSessionWebSocketConnection)
                try await waitUntil("the connection to see the task's end") { seen.taskHasEnded }
                #expect(task.deliverAfterEnd(.text("last")))
                let first = try await pending
                let later = try await connection.receive()
                return [first, later]
            }
        }
        #expect(result.value == [.text("last"), nil])
        #expect(result.close.code == nil)
        #expect(!result.close.initiatedLocally)
    }

    @Test(
        "a send pending when the connection fails CFNetwork's way, its handler never called, throws; a later one throws unasked",
        .timeLimit(.minutes(2)))
    func failureLikeCFNetworkEndsThePendingSend() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        let result = try await withTestTimeout(30, "the pending send to end") {
            try await connector(task, closeTimeout: .seconds(3600)).withConnection(WebSocketRequest(url: url)) { connection in
                task.serverStopsReading()
                let pending = Task { try await connection.send(.text("stuck")) }
                try await waitUntil("the send to wait") { task.pendingSendCount == 1 }
                task.serverFailsLikeCFNetwork("The network connection was lost.", sendsNeverComplete: true)
                await #expect(throws: WebSocketSeamError.notConnected) { try await pending.value }
                await #expect(throws: WebSocketSeamError.notConnected) { try await connection.send(.text("late")) }
            }
        }
        #expect(task.unansweredSendCount == 1, "the send after the end was not asked of the task")
        #expect(result.close == WebSocketCloseInfo(code: nil, reason: "The network connection was lost.", initiatedLocally: false))
    }

    @Test("an abort ends a send the task never answers, even before the task's end is reported", .timeLimit(.minutes(2)))
    func abortEndsAnUnansweredSend() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersClose: false, reportsEnd: false)
        let result = try await withTestTimeout(30, "the aborted send to end") {
            try await connector(task, closeTimeout: .seconds(3600)).withConnection(WebSocketRequest(url: url)) { connection in
                task.serverStopsReading()
                let pending = Task { try await connection.send(.text("stuck")) }
                try await waitUntil("the send to wait") { task.pendingSendCount == 1 }
                task.serverFailsLikeCFNetwork("The network connection was lost.", sendsNeverComplete: true)
                connection.abort()
                await #expect(throws: WebSocketSeamError.notConnected) { try await pending.value }
            }
        }
        #expect(result.close == WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true))
        #expect(task.unansweredSendCount == 1)
    }

    @Test("an abort ends a receive the task never answers, even before the task's end is reported")
    func abortEndsAnUnansweredReceive() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersClose: false, reportsEnd: false)
        let result = try await withTestTimeout(10, "the aborted receive to end") {
            try await connector(task, closeTimeout: .seconds(3600)).withConnection(WebSocketRequest(url: url)) { connection in
                async let pending = connection.receive()
                await task.waitForReceiver()
                task.serverFailsLikeCFNetwork("The network connection was lost.")
                connection.abort()
                return try await pending
            }
        }
        #expect(result.value == nil)
        #expect(result.close == WebSocketCloseInfo(code: nil, reason: "aborted", initiatedLocally: true))
        #expect(task.unansweredReceiveCount == 1)
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

    @Test("a close reason longer than a close frame holds is cut to 123 bytes at a character boundary (RFC 6455 §5.5)")
    func longCloseReasonCut() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil))
        // 120 two-byte characters: 240 bytes, and byte 123 falls inside a character.
        let reason = String(repeating: "é", count: 120)
        _ = try await connector(task).withConnection(WebSocketRequest(url: url)) { connection in
            await connection.close(code: 4000, reason: reason)
        }
        let sent = try #require(task.clientCloses.first?.reason)
        #expect(sent == String(repeating: "é", count: 61))
        #expect(sent.utf8.count == 122)
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
        // Nor does anything keep waiting for the end the task never reports: the scope's watcher is gone with it.
        try await withTestTimeout(30, "the connector to stop awaiting the task's end") { await task.waitForCompletionToBeAbandoned() }
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

    @Test("the default session configuration keeps no cookies, credentials or cache, and the default connector uses it")
    func defaultSessionConfiguration() {
        for configuration in [
            URLSessionWebSocketConnector.defaultSessionConfiguration(), URLSessionWebSocketConnector().makeSessionConfiguration(),
        ] {
            #expect(configuration.httpCookieStorage == nil)
            #expect(!configuration.httpShouldSetCookies)
            #expect(configuration.urlCredentialStorage == nil)
            #expect(configuration.urlCache == nil)
        }
    }

    @Test("the adapter adds the request's headers to a copy of the configuration: a shared one keeps none of them")
    func adapterCopiesTheConfiguration() {
        let shared = URLSessionConfiguration.ephemeral
        shared.httpAdditionalHeaders = ["User-Agent": "app/1"]
        let request = WebSocketRequest(url: url, headers: [HTTPHeaderField(name: "X-Api-Key", value: "da2-key")])
        // Made, never resumed: that much FoundationNetworking does too.
        let adapter = URLSessionWebSocketTaskAdapter(request: request, configuration: shared, maxMessageSize: 1024)
        defer { adapter.session.invalidateAndCancel() }
        #expect(shared.httpAdditionalHeaders?.count == 1)
        #expect(shared.httpAdditionalHeaders?["X-Api-Key"] == nil)
        let headers = adapter.session.configuration.httpAdditionalHeaders
        #expect(headers?["X-Api-Key"] as? String == "da2-key")
        #expect(headers?["User-Agent"] as? String == "app/1")
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

    @Test("a redirected upgrade is refused (nil to the completion handler): it then fails with its 3xx status, not auth")
    func redirectRefused() throws {
        let bridge = URLSessionWebSocketDelegateBridge()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try #require(URL(string: "https://example.com/event/realtime")))
        let elsewhere = try #require(URL(string: "wss://elsewhere.example/event/realtime"))
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: ["Location": elsewhere.absoluteString]))
        let answers = Locked<[URLRequest?]>([])
        bridge.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: URLRequest(url: elsewhere)) { request in
            answers.withLock { $0.append(request) }
        }
        #expect(answers.withLock { $0 } == [nil], "called once, refusing the redirect")
        // The task then completes with the 3xx response: a refused upgrade that names the status.
        let failure = URLSessionWebSocketDelegateBridge.upgradeFailure(status: 302, error: nil)
        guard case .upgradeRejected(let detail) = failure else {
            Issue.record("a refused redirect must be an upgrade rejection, got \(failure)")
            return
        }
        #expect(detail.hasPrefix("HTTP 302 "))
        #expect(!failure.isAuthenticationRejection)
    }

    @Test("a URLError reads as its description and its code, never its URL")
    func urlErrorDescribed() throws {
        let url = try #require(URL(string: "wss://example.com/event/realtime?token=secret"))
        let error = URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: url])
        guard case .connectionFailed(let detail) = URLSessionWebSocketDelegateBridge.upgradeFailure(status: nil, error: error)
        else {
            Issue.record("no response must be a connection failure")
            return
        }
        #expect(detail == describeWithoutRequest(error))
        #expect(detail.hasSuffix(" (URLError -1004)"), "\(detail)")
        #expect(!detail.contains("secret"), "\(detail)")
        #expect(describeWithoutRequest(WebSocketSeamError.connectionFailed("refused")) == "WebSocket connection failed: refused")
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

    @Test(
        "a reader cancelled while the task's receive ignores cancellation returns at once; the task stays open for the scope's close with 1000"
    )
    func cancelledReceiveReturnsAndTheScopeCloses() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersClose: false)
        let result = try await withTestTimeout(30, "the cancelled reader to return") {
            try await connector(task, closeTimeout: .milliseconds(200)).withConnection(WebSocketRequest(url: url)) { connection in
                let reader = Task { try await connection.receive() }
                await task.waitForReceiver()
                reader.cancel()
                let value = try await reader.boundedValue()
                #expect(task.dropCount == 0, "only the wait ended: a dropped task would take a close frame without a code")
                return value
            }
        }
        #expect(result.value == nil)
        #expect(task.clientCloses == [.init(code: 1000, reason: nil)], "the scope's end closes normally")
        #expect(task.dropCount == 1, "the silent server never answered the close: dropped after the close timeout")
        #expect(result.close == WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true))
    }

    @Test("a close the silent server never answers ends a pending receive within the close timeout")
    func unansweredCloseEndsThePendingReceive() async throws {
        let task = MockWebSocketTask(upgrade: .accept(subprotocol: nil), answersClose: false)
        let result = try await withTestTimeout(30, "the close to end the pending receive") {
            try await connector(task, closeTimeout: .milliseconds(50)).withConnection(WebSocketRequest(url: url)) { connection in
                async let pending = connection.receive()
                await task.waitForReceiver()
                await connection.close(code: 1000, reason: "")
                return try await pending
            }
        }
        #expect(result.value == nil)
        #expect(task.clientCloses == [MockWebSocketTask.ClientClose(code: 1000, reason: nil)])
        #expect(task.dropCount == 1, "the unanswered close was followed by a drop")
        #expect(result.close == WebSocketCloseInfo(code: 1000, reason: "", initiatedLocally: true))
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

/// A task written before pings and the completion-handler receive and send joined the seam: everything else forwards
/// to a mock; `sendPing`, `receive(completionHandler:)` and `send(_:completionHandler:)` are the protocol's defaults.
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
