import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

/// A ``GraphQLState`` driven without sockets: links are ``LinkControlRecorder``s, the wall clock is set by hand.
private struct GraphQLStateFixture {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    let state: GraphQLState
    let states = ConnectionStateBroadcaster()
    let auth = ScriptedAuthSession()
    let clock = ManualClock()
    private let now = Locked(GraphQLStateFixture.start)
    private let requests: AsyncStream<SupervisorRequest>
    private let continuation: AsyncStream<SupervisorRequest>.Continuation

    init(auth: (any AuthSession)? = nil, configure: (inout GraphQLTransportConfiguration) -> Void = { _ in }) throws {
        var configuration = try GraphQLTransportConfiguration("ws://127.0.0.1:9/graphql")
        configure(&configuration)
        let (requests, continuation) = AsyncStream<SupervisorRequest>.makeStream(bufferingPolicy: .unbounded)
        self.requests = requests
        self.continuation = continuation
        let now = self.now
        state = GraphQLState(
            configuration: configuration, auth: auth ?? self.auth, clock: clock, wallClock: WallClock { now.withLock { $0 } },
            states: states, requests: continuation, logger: Logger(label: "test.graphql-state"))
    }

    func advance(_ seconds: TimeInterval) { now.withLock { $0.addTimeInterval(seconds) } }
    func at(_ seconds: TimeInterval) -> Date { Self.start.addingTimeInterval(seconds) }

    func add(_ id: String, _ name: String = "Devices") -> SubscriptionProbe {
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 64, label: name, logger: Logger(label: "test"))
        state.add(id: id, operation: GraphQLOperation(query: "subscription \(name) { x }", operationName: name), sink: sink)
        return SubscriptionProbe(stream.elements)
    }

    func open(_ id: Int) -> LinkControlRecorder {
        let link = LinkControlRecorder(id: id)
        state.linkOpened(id, control: link.control)
        return link
    }

    /// What link `id` sends now, as "type id" strings.
    func sent(on id: Int) async -> [String] {
        await state.pendingMessages(on: id).map { message in
            guard case .text(let text) = message,
                let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            else { return "?" }
            return "\(object["type"] as? String ?? "?") \(object["id"] as? String ?? "?")"
        }
    }

    func drainRequests() async -> [SupervisorRequest] {
        continuation.finish()
        var all: [SupervisorRequest] = []
        for await request in requests { all.append(request) }
        return all
    }

    static func payload(_ json: String) -> RealtimePayload { RealtimePayload(json: Data(json.utf8)) }
}

/// A session that never says whether the user is signed in (until its call is cancelled).
private struct SilentAuthSession: AuthSession {
    func isSignedIn() async -> Bool { (try? await Task.sleep(for: .seconds(3600))) != nil }
    func credentials(forceRefresh: Bool) async throws -> AuthCredentials { .bearerToken("t") }
}

@Suite("GraphQLState without sockets")
struct GraphQLStateTests {
    @Test("subscribes go out once per link in the order they were made, each with a live-confirmation timer")
    func subscribesAndTimers() async throws {
        let fixture = try GraphQLStateFixture()
        _ = fixture.add("op-1")
        _ = fixture.add("op-2")
        #expect(fixture.state.wantsConnection)
        #expect(await fixture.sent(on: 1).isEmpty, "no link yet")
        let link = fixture.open(1)
        #expect(fixture.states.current == .connected)
        #expect(await fixture.sent(on: 1) == ["subscribe op-1", "subscribe op-2"])
        #expect(link.schedules == [.init(delay: .seconds(2), token: 0), .init(delay: .seconds(2), token: 1)])
        #expect(await fixture.sent(on: 1).isEmpty)
        #expect(await fixture.sent(on: 2).isEmpty, "not the open link")
        #expect(await fixture.drainRequests() == [.demandChanged, .demandChanged])
    }

    @Test("a subscription is live on its first next, or when its confirmation window passes")
    func liveConfirmation() async throws {
        let fixture = try GraphQLStateFixture()
        let byNext = fixture.add("op-1")
        let byTimer = fixture.add("op-2")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.deliver(GraphQLStateFixture.payload("1"), to: "op-1", on: 2, into: DeliveryBatch())
        fixture.state.deliver(GraphQLStateFixture.payload("1"), to: "op-1", on: 1, into: DeliveryBatch())
        #expect(try await byNext.next() == .live)
        #expect(try await byNext.next() == .payload(GraphQLStateFixture.payload("1")), "the frame on another link was dropped")
        fixture.state.timerFired(1, on: 1)
        #expect(try await byTimer.next() == .live)
    }

    @Test("cancelling completes on the wire only what was sent on the current link; the last one closes the idle link")
    func cancelAndIdleClose() async throws {
        let fixture = try GraphQLStateFixture()
        _ = fixture.add("op-1")
        let link = fixture.open(1)
        _ = await fixture.sent(on: 1)
        _ = fixture.add("op-2")
        fixture.state.cancel("op-2")
        #expect(await fixture.sent(on: 1).isEmpty)
        fixture.state.cancel("op-1")
        #expect(await fixture.sent(on: 1) == ["complete op-1"])
        #expect(link.closed?.end == .requested)
    }

    @Test("with an idle delay, the link closes when the idle timer fires, unless a subscription came back")
    func idleDelay() async throws {
        let fixture = try GraphQLStateFixture { $0.idleCloseDelay = .seconds(5) }
        _ = fixture.add("op-1")
        let link = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.cancel("op-1")
        #expect(link.schedules.last == .init(delay: .seconds(5), token: GraphQLState.idleToken))
        _ = fixture.add("op-2")
        fixture.state.timerFired(GraphQLState.idleToken, on: 1)
        #expect(link.requestedEnding == nil)
        fixture.state.cancel("op-2")
        fixture.state.timerFired(GraphQLState.idleToken, on: 1)
        #expect(link.closed?.end == .requested)
    }

    @Test("cancelled while connecting: the supervisor hears of it; the link closes once acknowledged (or after the idle delay)")
    func cancelWhileConnecting() async throws {
        let fixture = try GraphQLStateFixture()
        _ = fixture.add("op-1")
        fixture.state.cancel("op-1")
        #expect(fixture.open(1).closed?.end == .requested)
        #expect(await fixture.drainRequests() == [.demandChanged, .demandChanged])
        let delayed = try GraphQLStateFixture { $0.idleCloseDelay = .seconds(5) }
        _ = delayed.add("op-1")
        delayed.state.cancel("op-1")
        #expect(delayed.open(1).schedules == [.init(delay: .seconds(5), token: GraphQLState.idleToken)])
    }

    @Test("signed out: new subscribes fail with signedOut and are not sent; completes still go out; the idle link closes")
    func signedOutBatch() async throws {
        let fixture = try GraphQLStateFixture()
        _ = fixture.add("op-1")
        let link = fixture.open(1)
        #expect(await fixture.sent(on: 1) == ["subscribe op-1"])
        fixture.auth.setSignedIn(false)
        let refused = fixture.add("op-2")
        fixture.state.cancel("op-1")
        #expect(await fixture.sent(on: 1) == ["complete op-1"])
        guard case .failed(let error) = try await refused.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .signedOut)
        #expect(link.closed?.end == .requested)
    }

    @Test("a session that does not say whether the user is signed in: the link is replaced after the ack timeout")
    func signedInQuestionTimesOut() async throws {
        let fixture = try GraphQLStateFixture(auth: SilentAuthSession())
        _ = fixture.add("op-1")
        let link = fixture.open(1)
        let sending = Task { await fixture.sent(on: 1) }
        try await fixture.clock.waitForSleeper(sleeping: .seconds(15))
        fixture.clock.advance(by: .seconds(15))
        #expect(await sending.value.isEmpty)
        #expect(link.closed?.end == .credentialsTimeout(.seconds(15)))
    }

    @Test("the confirmation window's end and a first next on another thread: live always comes before the payload")
    func confirmationBeforePayload() async throws {
        let fixture = try GraphQLStateFixture()
        let probes = (0..<2000).map { fixture.add("op-\($0)") }
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        let state = fixture.state
        for index in probes.indices {
            // The timer (token: the sequence number) and the reader race, as they do on the URLSession path.
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                guard side == 1 else { return state.timerFired(index, on: 1) }
                let batch = DeliveryBatch()
                state.deliver(GraphQLStateFixture.payload("1"), to: "op-\(index)", on: 1, into: batch)
                batch.flush()
            }
        }
        for probe in probes { #expect(try await probe.next() == .live) }
    }

    @Test("the server ends an operation with error (graphQLErrors) or complete (finished)")
    func serverEndsOperations() async throws {
        let fixture = try GraphQLStateFixture()
        let failed = fixture.add("op-1")
        let completed = fixture.add("op-2")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.ended("op-1", errorsJSON: #"[{"message":"no"}]"#)
        fixture.state.ended("op-2", errorsJSON: nil)
        guard case .failed(let error) = try await failed.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .graphQLErrors(#"[{"message":"no"}]"#))
        guard case .finished = try await completed.ending() else { Issue.record("must finish"); return }
    }

    /// How a link's end bears on reconnecting: (end, close code, subscriptions left, loss).
    static let endings: [(end: LinkEnd, close: UInt16?, subscribed: Bool, loss: LinkLoss)] = [
        (.requested, nil, true, .lost(.requested)),
        (.rotated, nil, true, .lost(.requested)),
        (.peerClosed, 4400, true, .lost(.fatal(.closedByServer(code: 4400, reason: "r")))),
        (.peerClosed, 4401, true, .lost(.fatal(.closedByServer(code: 4401, reason: "r")))),
        (.peerClosed, 4403, true, .lost(.authRejected("closed with 4403 r"))),
        (.peerClosed, 1000, true, .lost(.retryable)),
        (.peerClosed, 1000, false, .lost(.requested)),
        (.peerClosed, nil, true, .lost(.retryable)),
        (.openFailed("HTTP 401", authRejected: true), nil, true, .lost(.authRejected("HTTP 401"))),
        (.openFailed("refused", authRejected: false), nil, true, .lost(.retryable)),
        (.ackTimeout(.seconds(15)), nil, true, .lost(.retryable)),
        (.pongTimeout(.seconds(10)), nil, true, .lost(.retryable)),
        (.protocolViolation("x"), nil, true, .lost(.retryable)),
    ]

    @Test("a link's end maps to the reference client's reconnect rule", arguments: endings)
    func linkEndings(end: LinkEnd, close: UInt16?, subscribed: Bool, loss: LinkLoss) async throws {
        let fixture = try GraphQLStateFixture()
        if subscribed { _ = fixture.add("op-1") }
        _ = fixture.open(1)
        let report = LinkReport(end: end, acknowledged: true, close: WebSocketCloseInfo(code: close, reason: "r"))
        #expect(fixture.state.linkEnded(1, report: report) == loss)
    }

    /// (was it live, seconds of the last frame or nil, expected gap start) with the clock at 20 s on confirmation.
    static let gaps: [(wasLive: Bool, lastFrame: TimeInterval?, gapStart: TimeInterval?)] = [
        (true, 5, 3),
        (true, nil, 8),
        (false, 5, nil),
    ]

    @Test("after a reconnect, the same id is sent again and the gap runs from the last frame minus the margin", arguments: gaps)
    func gapWindows(wasLive: Bool, lastFrame: TimeInterval?, gapStart: TimeInterval?) async throws {
        let fixture = try GraphQLStateFixture()
        let probe = fixture.add("op-1")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        if wasLive {
            fixture.state.confirm("op-1", on: 1)
            #expect(try await probe.next() == .live)
        }
        fixture.advance(8)
        let report = LinkReport(end: .peerClosed, acknowledged: true, lastReceived: lastFrame.map(fixture.at))
        #expect(fixture.state.linkEnded(1, report: report) == .lost(.retryable))
        fixture.advance(12)
        _ = fixture.open(2)
        #expect(await fixture.sent(on: 2) == ["subscribe op-1"])
        fixture.state.deliver(GraphQLStateFixture.payload("9"), to: "op-1", on: 2, into: DeliveryBatch())
        let expected: SubscriptionEvent = gapStart.map { .resumed(gap: GapWindow(start: fixture.at($0), end: fixture.at(20))) } ?? .live
        #expect(try await probe.next() == expected)
        #expect(try await probe.next() == .payload(GraphQLStateFixture.payload("9")))
    }
}
