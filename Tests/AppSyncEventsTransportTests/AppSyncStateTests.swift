import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

/// An ``AppSyncState`` driven without sockets: links are ``LinkControlRecorder``s, the wall clock is set by hand.
struct StateFixture {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    let state: AppSyncState
    let states = ConnectionStateBroadcaster()
    let auth: ScriptedAuthSession
    private let now = Locked(StateFixture.start)
    private let requests: AsyncStream<SupervisorRequest>
    private let continuation: AsyncStream<SupervisorRequest>.Continuation

    init(auth: ScriptedAuthSession = ScriptedAuthSession(.bearerToken("jwt-1")), margin: Duration = .seconds(2)) throws {
        let (requests, continuation) = AsyncStream<SupervisorRequest>.makeStream(bufferingPolicy: .unbounded)
        self.requests = requests
        self.continuation = continuation
        self.auth = auth
        let now = self.now
        state = AppSyncState(
            auth: auth, endpoint: try AppSyncEndpoint("https://abc.appsync-api.us-east-1.amazonaws.com/event"),
            wallClock: WallClock { now.withLock { $0 } }, margin: margin, rotationTimeout: .seconds(30), states: states,
            requests: continuation, logger: Logger(label: "test.appsync-state"))
    }

    /// Moves the wall clock forward.
    func advance(_ seconds: TimeInterval) { now.withLock { $0.addTimeInterval(seconds) } }
    func at(_ seconds: TimeInterval) -> Date { Self.start.addingTimeInterval(seconds) }

    /// Registers a subscription and returns a probe reading its stream.
    func add(_ id: String, _ channel: String = "default/a") -> SubscriptionProbe {
        let (stream, sink) = SubscriptionSink.make(bufferLimit: 64, label: channel, logger: Logger(label: "test"))
        state.add(id: id, channel: channel, sink: sink)
        return SubscriptionProbe(stream.elements)
    }

    /// Registers a publish and returns its reply signal.
    func publish(_ id: String, _ channel: String = "default/p") -> OneShotSignal<Result<PublishResult, RealtimeError>> {
        let reply = OneShotSignal<Result<PublishResult, RealtimeError>>()
        state.addPublish(id: id, channel: channel, events: ["1"], reply: reply)
        return reply
    }

    /// Creates and opens link `id`.
    func open(_ id: Int) -> LinkControlRecorder {
        let link = LinkControlRecorder(id: id)
        state.linkCreated(id)
        state.linkOpened(id, control: link.control)
        return link
    }

    /// What link `id` sends now, as (type, id, channel) triples.
    func sent(on id: Int) async -> [Frame] {
        await state.pendingMessages(on: id).map(Frame.init)
    }

    /// Every request the state made of its supervisor (ends the stream).
    func drainRequests() async -> [SupervisorRequest] {
        continuation.finish()
        var all: [SupervisorRequest] = []
        for await request in requests { all.append(request) }
        return all
    }

    static func data(_ json: String) -> RealtimePayload { RealtimePayload(json: Data(json.utf8)) }
}

/// A client frame, reduced to what the state decided.
struct Frame: Equatable, CustomStringConvertible {
    var type: String
    var id: String
    var channel: String?
    var token: String?

    init(type: String, id: String, channel: String? = nil, token: String? = nil) {
        self.type = type
        self.id = id
        self.channel = channel
        self.token = token
    }

    init(_ message: WebSocketMessage) {
        guard case .text(let text) = message,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else {
            self.init(type: "?", id: "?")
            return
        }
        self.init(
            type: object["type"] as? String ?? "?", id: object["id"] as? String ?? "?", channel: object["channel"] as? String,
            token: (object["authorization"] as? [String: String])?["Authorization"])
    }

    var description: String { "\(type) \(id) \(channel ?? "-") \(token ?? "-")" }
}

@Suite("AppSyncState without sockets")
struct AppSyncStateTests {
    @Test("subscriptions wait for a link, go out in the order they were made, and are sent once per link")
    func subscriptionsAndLinks() async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1", "default/a")
        _ = fixture.add("s-2", "default/b")
        #expect(fixture.state.wantsConnection)
        #expect(await fixture.sent(on: 1).isEmpty, "no link yet")
        let link = fixture.open(1)
        #expect(fixture.states.current == .connected)
        #expect(link.wakes >= 1)
        #expect(
            await fixture.sent(on: 1) == [
                Frame(type: "subscribe", id: "s-1", channel: "default/a", token: "jwt-1"),
                Frame(type: "subscribe", id: "s-2", channel: "default/b", token: "jwt-1"),
            ])
        #expect(await fixture.sent(on: 1).isEmpty, "already subscribed on this link")
        _ = fixture.add("s-3", "default/c")
        #expect(await fixture.sent(on: 1) == [Frame(type: "subscribe", id: "s-3", channel: "default/c", token: "jwt-1")])
        #expect(fixture.auth.credentialRequests == [false, false], "one request per batch")
        #expect(await fixture.drainRequests() == [.demandChanged, .demandChanged, .demandChanged])
    }

    @Test("cancelling unsubscribes only what the link subscribed, and the last one closes the idle link")
    func cancelAndIdle() async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        _ = fixture.add("s-2")
        let link = fixture.open(1)
        _ = await fixture.sent(on: 1)
        _ = fixture.add("s-3")
        fixture.state.cancel("s-3")
        #expect(await fixture.sent(on: 1).isEmpty, "s-3 was never sent: nothing to send for it")
        fixture.state.cancel("s-1")
        #expect(await fixture.sent(on: 1) == [Frame(type: "unsubscribe", id: "s-1")])
        #expect(fixture.auth.credentialRequests == [false], "an unsubscribe needs no credentials")
        #expect(link.requestedEnding == nil)
        fixture.state.cancel("s-2")
        #expect(link.closed?.end == .requested && link.closed?.reason == "idle")
        #expect(await fixture.sent(on: 1) == [Frame(type: "unsubscribe", id: "s-2")], "unsubscribed as the idle link closes")
        #expect(!fixture.state.wantsConnection)
        _ = fixture.add("s-4")
        #expect(await fixture.sent(on: 1).isEmpty, "nothing new goes out on a link that is closing")
    }

    /// Where a `data` frame goes.
    static let routes: [(id: String, link: Int, delivered: Bool)] = [
        ("s-1", 1, true),  // the link it is live on
        ("s-1", 2, false),  // another link
        ("nope", 1, false),  // an unknown id
    ]

    @Test("data frames reach the sink of the subscription on the link it delivers on, and nothing else", arguments: routes)
    func routing(id: String, link: Int, delivered: Bool) async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        #expect((fixture.state.routeData(StateFixture.data("1"), id: id, on: link) != nil) == delivered)
    }

    /// How a link's end bears on reconnecting.
    static let endings: [(end: LinkEnd, loss: LinkLoss)] = [
        (.requested, .lost(.requested)),
        (.authRejected("Token expired"), .lost(.authRejected("Token expired"))),
        (.openFailed("HTTP 401", authRejected: true), .lost(.authRejected("HTTP 401"))),
        (.openFailed("refused", authRejected: false), .lost(.retryable)),
        (.peerClosed, .lost(.retryable)),
        (.keepAliveTimeout(.seconds(300)), .lost(.retryable)),
        (.serverError(errorType: "LimitExceededError", message: nil), .lost(.retryable)),
        (.protocolViolation("x"), .lost(.retryable)),
    ]

    @Test("a primary link's end is a lost connection, reconnected as its ending says", arguments: endings)
    func linkEndings(end: LinkEnd, loss: LinkLoss) async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        _ = fixture.open(1)
        #expect(fixture.state.linkEnded(1, report: LinkReport(end: end, acknowledged: true)) == loss)
    }

    /// The gap a subscription reports when it is confirmed again: (was it live, seconds of the last frame or nil,
    /// the expected event with the clock at 20 s).
    static let gaps: [(wasLive: Bool, lastFrame: TimeInterval?, gapStart: TimeInterval?)] = [
        (true, 5, 3),  // last frame at 5 s, minus the 2 s margin
        (true, nil, 8),  // nothing received: the gap starts when the link was found lost (8 s)
        (false, 5, nil),  // never live: the first confirmation is `live`, not `resumed`
    ]

    @Test("gap windows run from the lost link's last frame minus the margin to the confirmation", arguments: gaps)
    func gapWindows(wasLive: Bool, lastFrame: TimeInterval?, gapStart: TimeInterval?) async throws {
        let fixture = try StateFixture()
        let probe = fixture.add("s-1")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        if wasLive {
            fixture.state.subscriptionConfirmed("s-1", on: 1)
            #expect(try await probe.next() == .live)
        }
        fixture.advance(8)
        let report = LinkReport(end: .peerClosed, acknowledged: true, lastReceived: lastFrame.map(fixture.at))
        #expect(fixture.state.linkEnded(1, report: report) == .lost(.retryable))
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 1) == nil, "nothing delivers from a lost link")
        fixture.advance(12)
        _ = fixture.open(2)
        #expect(await fixture.sent(on: 2) == [Frame(type: "subscribe", id: "s-1", channel: "default/a", token: "jwt-1")])
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        let expected: SubscriptionEvent = gapStart.map { .resumed(gap: GapWindow(start: fixture.at($0), end: fixture.at(20))) } ?? .live
        #expect(try await probe.next() == expected)
    }

    @Test("rotation: subscribe on the successor, unsubscribe the old link once all are live, cut over without duplicates")
    func rotationProgress() async throws {
        let fixture = try StateFixture()
        let probe = fixture.add("s-1")
        let old = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        #expect(try await probe.next() == .live)

        fixture.state.rotationDue(from: 1)
        let new = fixture.open(2)
        #expect(new.schedules == [.init(delay: .seconds(30), token: AppSyncState.rotationDeadlineToken)])
        #expect(await fixture.sent(on: 2) == [Frame(type: "subscribe", id: "s-1", channel: "default/a", token: "jwt-1")])
        // The old link delivers (and logs) while the new one buffers.
        fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 1)?.yield(.payload(StateFixture.data("1")))
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 2) == nil)
        #expect(await fixture.sent(on: 1).isEmpty, "nothing to unsubscribe before the successor is live")
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        #expect(await fixture.sent(on: 1) == [Frame(type: "unsubscribe", id: "s-1")])
        #expect(await fixture.sent(on: 1).isEmpty, "not subscribed again on the old link while it drains")
        #expect(fixture.state.routeData(StateFixture.data("2"), id: "s-1", on: 2) == nil, "still buffered")
        fixture.state.unsubscribed("s-1", on: 1)

        #expect(old.closed?.end == .rotated)
        #expect(new.schedules.last == .init(delay: .seconds(30), token: AppSyncState.overlapExpiryToken))
        #expect(try await probe.next() == .payload(StateFixture.data("1")))
        #expect(try await probe.next() == .payload(StateFixture.data("2")), "the buffer, minus what the old link delivered")
        #expect(fixture.state.routeData(StateFixture.data("3"), id: "s-1", on: 2) != nil, "the successor delivers now")
        #expect(fixture.state.linkEnded(1, report: LinkReport(end: .rotated, acknowledged: true)) == .replaced)
        #expect(await fixture.drainRequests().contains(.rotate))
    }

    @Test("rotation that does not complete in time cuts over anyway; the unconfirmed subscription resumes with a gap")
    func rotationDeadline() async throws {
        let fixture = try StateFixture()
        let live = fixture.add("s-1", "default/a")
        let slow = fixture.add("s-2", "default/b")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        fixture.state.subscriptionConfirmed("s-2", on: 1)
        #expect(try await live.next() == .live)
        #expect(try await slow.next() == .live)
        fixture.state.rotationDue(from: 1)
        _ = fixture.open(2)
        _ = await fixture.sent(on: 2)
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        fixture.advance(30)
        fixture.state.timerFired(AppSyncState.rotationDeadlineToken, on: 2)
        fixture.state.subscriptionConfirmed("s-2", on: 2)
        #expect(try await slow.next() == .resumed(gap: GapWindow(start: fixture.at(-2), end: fixture.at(30))))
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 2) != nil)
    }

    @Test("a cut-over confirms what the successor confirmed: live for a subscription never live, resumed with its gap for one interrupted")
    func cutOverConfirms() async throws {
        let fixture = try StateFixture()
        let pending = fixture.add("s-1", "default/a")
        let interrupted = fixture.add("s-2", "default/b")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-2", on: 1)
        #expect(try await interrupted.next() == .live)
        // The first rotation cuts over at its deadline with neither confirmed on link 2: s-2 is interrupted there.
        fixture.state.rotationDue(from: 1)
        _ = fixture.open(2)
        _ = await fixture.sent(on: 2)
        fixture.advance(30)
        fixture.state.timerFired(AppSyncState.rotationDeadlineToken, on: 2)
        // The second confirms both on link 3 and cuts over there.
        fixture.state.rotationDue(from: 2)
        _ = fixture.open(3)
        _ = await fixture.sent(on: 3)
        fixture.state.subscriptionConfirmed("s-1", on: 3)
        fixture.state.subscriptionConfirmed("s-2", on: 3)
        fixture.advance(10)
        fixture.state.timerFired(AppSyncState.rotationDeadlineToken, on: 3)
        #expect(try await pending.next() == .live)
        // The gap ends at its confirmation on link 3 (30 s): what came after it is in link 3's buffer, delivered now.
        #expect(try await interrupted.next() == .resumed(gap: GapWindow(start: fixture.at(-2), end: fixture.at(30))))
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 3) != nil)
        #expect(fixture.state.routeData(StateFixture.data("2"), id: "s-2", on: 3) != nil)
    }

    @Test("publishes: sent on the primary, answered, failed with the link that carried them, kept when not yet sent")
    func publishCompletion() async throws {
        let fixture = try StateFixture()
        let early = fixture.publish("p-1")
        #expect(fixture.state.wantsConnection)
        _ = fixture.open(1)
        #expect(await fixture.sent(on: 1) == [Frame(type: "publish", id: "p-1", channel: "default/p", token: "jwt-1")])
        _ = fixture.add("s-1")  // keeps the link from closing as idle once p-1 is answered
        _ = await fixture.sent(on: 1)
        #expect(fixture.state.isPublish("p-1"))
        fixture.state.completePublish("p-1", .success(PublishResult(successful: [], failed: [])))
        #expect(early.value == .success(PublishResult(successful: [], failed: [])))
        #expect(!fixture.state.isPublish("p-1"))

        let carried = fixture.publish("p-2")
        _ = await fixture.sent(on: 1)
        let waiting = fixture.publish("p-3")
        // p-3 is not sent before the link ends: it waits for the next one.
        _ = fixture.state.linkEnded(1, report: LinkReport(end: .peerClosed, acknowledged: true))
        #expect(carried.value == .failure(.network("connection closed: without a close frame")))
        #expect(waiting.value == nil)
        _ = fixture.open(2)
        #expect(
            await fixture.sent(on: 2) == [
                Frame(type: "subscribe", id: "s-1", channel: "default/a", token: "jwt-1"),
                Frame(type: "publish", id: "p-3", channel: "default/p", token: "jwt-1"),
            ])
    }

    @Test("a publish refused as unauthorized is sent again once with forceRefresh; refused again it fails naming the channel")
    func publishAuthRetry() async throws {
        let fixture = try StateFixture()
        let reply = fixture.publish("p-1", "default/x")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.auth.setCredentials(.bearerToken("jwt-2"))
        fixture.state.publishRejected("p-1", AppSyncServerError(errorType: "UnauthorizedException", message: "Token expired"))
        #expect(reply.value == nil)
        #expect(await fixture.sent(on: 1) == [Frame(type: "publish", id: "p-1", channel: "default/x", token: "jwt-2")])
        #expect(fixture.auth.credentialRequests == [false, true])
        fixture.state.publishRejected("p-1", AppSyncServerError(errorType: "UnauthorizedException", message: "Token expired"))
        #expect(
            reply.value
                == .failure(
                    .publishRejected(
                        errorType: "UnauthorizedException", message: "channel default/x refused after refreshing credentials: Token expired"
                    )))
    }

    @Test("a subscription cancelled while its batch waits for credentials is not sent")
    func cancelledBetweenTakeAndFinish() async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        _ = fixture.open(1)
        let batch = fixture.state.takeBatch(on: 1)
        #expect(batch.subscribes == ["s-1"] && !batch.forceRefresh)
        fixture.state.cancel("s-1")
        let messages = fixture.state.finishBatch(batch, .credentials(.bearerToken("jwt-1")), on: 1)
        #expect(messages.isEmpty)
    }

    @Test("a batch whose credentials never came (cancelled) releases its publishes for the next batch")
    func cancelledFetchReleasesClaims() async throws {
        let fixture = try StateFixture()
        _ = fixture.publish("p-1")
        _ = fixture.open(1)
        let batch = fixture.state.takeBatch(on: 1)
        #expect(batch.publishes == ["p-1"])
        #expect(fixture.state.takeBatch(on: 1).publishes.isEmpty, "claimed: not taken twice")
        #expect(fixture.state.finishBatch(batch, .cancelled, on: 1).isEmpty)
        #expect(fixture.state.takeBatch(on: 1).publishes == ["p-1"])
    }

    @Test("a publish taken on the old link during a cut-over goes out on the new primary")
    func publishMovesToTheNewPrimary() async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        fixture.state.rotationDue(from: 1)
        let new = fixture.open(2)
        _ = await fixture.sent(on: 2)
        _ = fixture.publish("p-1")
        let batch = fixture.state.takeBatch(on: 1)
        #expect(batch.publishes == ["p-1"])
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        _ = await fixture.sent(on: 1)
        fixture.state.unsubscribed("s-1", on: 1)  // cut over: link 2 is primary
        let wakesBefore = new.wakes
        #expect(fixture.state.finishBatch(batch, .credentials(.bearerToken("jwt-1")), on: 1).isEmpty)
        #expect(new.wakes > wakesBefore)
        #expect(await fixture.sent(on: 2) == [Frame(type: "publish", id: "p-1", channel: "default/p", token: "jwt-1")])
    }

    private struct Unavailable: Error, CustomStringConvertible {
        var description: String { "no refresh token" }
    }

    @Test("without credentials the batch's subscribes and publishes fail; the subscriptions already live stay")
    func noCredentials() async throws {
        for (fetched, expected) in [
            (SendTimeCredentials.signedOut, RealtimeError.signedOut),
            (.unavailable(Unavailable()), .sessionExpired("credentials unavailable to subscribe to default/b: no refresh token")),
        ] {
            let fixture = try StateFixture()
            let live = fixture.add("s-1", "default/a")
            let link = fixture.open(1)
            _ = await fixture.sent(on: 1)
            fixture.state.subscriptionConfirmed("s-1", on: 1)
            let refused = fixture.add("s-2", "default/b")
            let reply = fixture.publish("p-1", "default/p")
            let batch = fixture.state.takeBatch(on: 1)
            #expect(fixture.state.finishBatch(batch, fetched, on: 1).isEmpty)
            guard case .failed(let error) = try await refused.ending() else { Issue.record("must fail"); return }
            #expect(error as? RealtimeError == expected)
            guard case .failure(let publishError)? = reply.value else { Issue.record("the publish must fail"); return }
            if case .sessionExpired(let detail) = publishError { #expect(detail.contains("default/p")) }
            #expect(try await live.next() == .live)
            #expect(link.requestedEnding == nil)
        }
    }
}
