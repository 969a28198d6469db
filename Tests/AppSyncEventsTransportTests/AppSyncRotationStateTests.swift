import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

@Suite("AppSyncState rotation: the old link's publishes, an old link lost mid-rotation, a successor given up")
struct AppSyncRotationStateTests {
    private static let accepted = PublishResult(successful: [], failed: [])

    /// s-1 live on link 1 and a rotation to link 2 under way, its subscribe sent; returns link 1.
    private func rotatingFromLiveLink(_ fixture: StateFixture) async throws -> LinkControlRecorder {
        let probe = fixture.add("s-1")
        let old = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        #expect(try await probe.next() == .live)
        fixture.state.rotationDue(from: 1)
        _ = fixture.open(2)
        _ = await fixture.sent(on: 2)
        return old
    }

    /// s-1 live on link 1, rotated to link 2 with p-1 sent on link 1 before the cut-over; returns the old link.
    private func cutOverWithPublishInFlight(
        _ fixture: StateFixture
    ) async throws -> (old: LinkControlRecorder, reply: OneShotSignal<Result<PublishResult, RealtimeError>>) {
        let old = try await rotatingFromLiveLink(fixture)
        let reply = fixture.publish("p-1")
        #expect(await fixture.sent(on: 1) == [Frame(type: "publish", id: "p-1", channel: "default/p", token: "jwt-1")])
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        #expect(await fixture.sent(on: 1) == [Frame(type: "unsubscribe", id: "s-1")])
        fixture.state.unsubscribed("s-1", on: 1)
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 2) != nil, "cut over to link 2 all the same")
        #expect(old.requestedEnding == nil, "p-1's reply can only come on link 1: it stays open")
        #expect(reply.value == nil)
        return (old, reply)
    }

    @Test("a rotation's old link stays open until the publishes sent on it are answered, then closes")
    func oldLinkAwaitsPublishReplies() async throws {
        let fixture = try StateFixture()
        let (old, reply) = try await cutOverWithPublishInFlight(fixture)
        #expect(await fixture.sent(on: 1).isEmpty, "nothing new goes out on the old link")
        fixture.state.completePublish("p-1", .success(Self.accepted))  // its publish_success, read on link 1
        #expect(reply.value == .success(Self.accepted))
        #expect(old.closed?.end == .rotated)
        #expect(fixture.state.linkEnded(1, report: LinkReport(end: .rotated, acknowledged: true)) == .replaced)
    }

    @Test("a rotation's old link whose publishes are not answered in time closes, failing them as of unknown outcome")
    func oldLinkDrainDeadline() async throws {
        let fixture = try StateFixture()
        let (old, reply) = try await cutOverWithPublishInFlight(fixture)
        #expect(old.schedules == [.init(delay: .seconds(30), token: AppSyncState.drainDeadlineToken)])
        fixture.state.timerFired(AppSyncState.drainDeadlineToken, on: 1)
        #expect(old.closed?.end == .rotated)
        #expect(reply.value == .failure(AppSyncState.unansweredOnRotatedLink))
        guard case .failure(.network(let detail))? = reply.value else { return }
        #expect(detail.contains("may have been delivered"), "the outcome is unknown, and says so")
        #expect(fixture.state.linkEnded(1, report: LinkReport(end: .rotated, acknowledged: true)) == .replaced)
    }

    @Test("a successor lost before the old link sent its unsubscribes: the old link keeps the subscription, nothing is lost")
    func successorLostBeforeUnsubscribesWentOut() async throws {
        let fixture = try StateFixture()
        _ = try await rotatingFromLiveLink(fixture)
        fixture.state.subscriptionConfirmed("s-1", on: 2)  // queues the unsubscribe on link 1
        #expect(fixture.state.linkEnded(2, report: LinkReport(end: .peerClosed, acknowledged: true)) == .replaced)
        #expect(await fixture.sent(on: 1).isEmpty, "neither unsubscribed nor subscribed again")
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 1) != nil, "still delivered on link 1")
    }

    @Test("a late refusal from a rotation's old link leaves the subscription live on the new primary")
    func refusalFromRetiredLinkIgnored() async throws {
        let fixture = try StateFixture()
        _ = try await cutOverWithPublishInFlight(fixture)
        fixture.state.subscriptionRejected("s-1", AppSyncServerError(errorType: "BadRequestException", message: "late"), on: 1)
        #expect(fixture.state.routeData(StateFixture.data("1"), id: "s-1", on: 2) != nil, "still delivered on link 2")
    }

    @Test("an old link lost mid-rotation opens the gap at its last frame, for the confirmed and the unconfirmed alike")
    func salvageGapsStartAtTheLastFrame() async throws {
        let fixture = try StateFixture()
        let early = fixture.add("s-0", "default/a")  // confirmed on link 2 before link 1's last frame: nothing lost
        let late = fixture.add("s-1", "default/b")  // confirmed on link 2 after it: 10 s − 2 s … 15 s may be lost
        let unconfirmed = fixture.add("s-2", "default/c")  // confirmed on link 2 only after the cut-over
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        for (id, probe) in [("s-0", early), ("s-1", late), ("s-2", unconfirmed)] {
            fixture.state.subscriptionConfirmed(id, on: 1)
            #expect(try await probe.next() == .live)
        }
        fixture.state.rotationDue(from: 1)
        _ = fixture.open(2)
        _ = await fixture.sent(on: 2)
        fixture.advance(5)
        fixture.state.subscriptionConfirmed("s-0", on: 2)
        fixture.advance(10)
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        #expect(fixture.state.routeData(StateFixture.data("b"), id: "s-1", on: 2) == nil, "buffered until the cut-over")
        fixture.advance(45)
        // Link 1 was silent since 10 s; its watchdog ends it at 60 s.
        let report = LinkReport(end: .keepAliveTimeout(.seconds(50)), acknowledged: true, lastReceived: fixture.at(10))
        #expect(fixture.state.linkEnded(1, report: report) == .replaced)

        #expect(try await late.next() == .resumed(gap: GapWindow(start: fixture.at(8), end: fixture.at(15))))
        #expect(try await late.next() == .payload(StateFixture.data("b")))
        fixture.state.routeData(StateFixture.data("a"), id: "s-0", on: 2)?.yield(.payload(StateFixture.data("a")))
        #expect(try await early.next() == .payload(StateFixture.data("a")), "no gap reported before it")
        fixture.advance(10)
        _ = await fixture.sent(on: 2)
        fixture.state.subscriptionConfirmed("s-2", on: 2)
        #expect(try await unconfirmed.next() == .resumed(gap: GapWindow(start: fixture.at(8), end: fixture.at(70))))
    }

    @Test("a rotation cut over at its deadline opens the gaps where it began: the old link may have gone silent since")
    func deadlineGapsStartWhereTheRotationBegan() async throws {
        let fixture = try StateFixture()
        let confirmed = fixture.add("s-1", "default/a")  // confirmed on link 2 at 10 s
        let unconfirmed = fixture.add("s-2", "default/b")  // not confirmed on link 2 by the deadline
        let old = fixture.open(1)
        _ = await fixture.sent(on: 1)
        for (id, probe) in [("s-1", confirmed), ("s-2", unconfirmed)] {
            fixture.state.subscriptionConfirmed(id, on: 1)
            #expect(try await probe.next() == .live)
        }
        fixture.state.rotationDue(from: 1)
        _ = fixture.open(2)
        _ = await fixture.sent(on: 2)
        // Link 1 goes half-open at 5 s; its ping and `ka` checks have not noticed by the deadline (30 s).
        fixture.advance(10)
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        fixture.advance(20)
        fixture.state.timerFired(AppSyncState.rotationDeadlineToken, on: 2)
        #expect(old.closed?.end == .rotated, "retired: its end reports nothing later")

        fixture.state.routeData(StateFixture.data("a"), id: "s-1", on: 2)?.yield(.payload(StateFixture.data("a")))
        guard case .resumed(let gap) = try await confirmed.next() else { Issue.record("expected a gap before the payload"); return }
        #expect(gap.start <= fixture.at(3) && gap.end == fixture.at(10), "5 s − 2 s … 10 s reached neither link")
        #expect(await fixture.sent(on: 2) == [Frame(type: "subscribe", id: "s-2", channel: "default/b", token: "jwt-1")])
        fixture.advance(2)
        fixture.state.subscriptionConfirmed("s-2", on: 2)
        guard case .resumed(let late) = try await unconfirmed.next() else { Issue.record("expected resumed(gap:)"); return }
        #expect(late.start <= fixture.at(3) && late.end == fixture.at(32))
    }

    @Test("a deadline cut-over opens no gap for a subscription the old link delivered to after the new one confirmed it")
    func deadlineAfterOldDeliveredPastConfirmation() async throws {
        let fixture = try StateFixture()
        let probe = fixture.add("s-1", "default/a")
        _ = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        #expect(try await probe.next() == .live)
        fixture.state.rotationDue(from: 1)
        _ = fixture.open(2)
        _ = await fixture.sent(on: 2)
        fixture.advance(10)
        fixture.state.subscriptionConfirmed("s-1", on: 2)
        // Only the old link's unsubscribe answer is late: it was alive after the confirmation.
        fixture.advance(5)
        fixture.state.routeData(StateFixture.data("a"), id: "s-1", on: 1)?.yield(.payload(StateFixture.data("a")))
        fixture.advance(15)
        fixture.state.timerFired(AppSyncState.rotationDeadlineToken, on: 2)
        fixture.state.routeData(StateFixture.data("b"), id: "s-1", on: 2)?.yield(.payload(StateFixture.data("b")))
        #expect(try await probe.next() == .payload(StateFixture.data("a")))
        #expect(try await probe.next() == .payload(StateFixture.data("b")), "no gap in between")
    }

    @Test("a successor that opens after its rotation was given up is closed, so the supervisor's own reconnect is reported connected")
    func successorAfterAbandonedRotation() async throws {
        let fixture = try StateFixture()
        var supervisor = SupervisorStateMachine(policy: .fixed(.seconds(1)), random: { 0 })
        /// Publishes the supervisor's reports as `LinkSupervisor` does, and returns the links it starts.
        func perform(_ actions: [SupervisorStateMachine.Action]) -> [Int] {
            var started: [Int] = []
            for action in actions {
                if case .report(let state) = action { fixture.states.update(state) }
                if case .startLink(let id, _, _) = action { started.append(id) }
            }
            return started
        }
        func ended(_ id: Int, _ end: LinkEnd) -> [Int] {
            let loss = fixture.state.linkEnded(id, report: LinkReport(end: end, acknowledged: true))
            return perform(supervisor.linkEnded(loss: loss, acknowledged: true, wantsConnection: fixture.state.wantsConnection))
        }

        _ = fixture.add("s-1")
        #expect(perform(supervisor.start(wantsConnection: true)) == [0])
        _ = fixture.open(0)
        _ = await fixture.sent(on: 0)
        fixture.state.subscriptionConfirmed("s-1", on: 0)
        fixture.state.rotationDue(from: 0)
        #expect(perform(supervisor.rotationDue()) == [1])
        fixture.state.linkCreated(1)  // the successor, still connecting when the old link dies
        #expect(ended(0, .peerClosed).isEmpty, "backing off")
        #expect(fixture.states.current == .reconnecting(attempt: 1, delay: .seconds(1)))

        let successor = LinkControlRecorder(id: 1)
        fixture.state.linkOpened(1, control: successor.control)
        #expect(successor.closed?.reason == "rotation abandoned")
        if successor.requestedEnding != nil { #expect(ended(1, .requested).isEmpty, "a successor given up loses nothing") }
        #expect(perform(supervisor.backoffElapsed(id: 0, wantsConnection: fixture.state.wantsConnection)) == [2])
        let primary = fixture.open(2)
        #expect(primary.requestedEnding == nil)
        #expect(fixture.states.current == .connected)
        #expect(await fixture.sent(on: 2) == [Frame(type: "subscribe", id: "s-1", channel: "default/a", token: "jwt-1")])
    }

    @Test("a successor that opens after every subscription was cancelled closes both links")
    func successorOpensIdle() async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        let old = fixture.open(1)
        _ = await fixture.sent(on: 1)
        fixture.state.subscriptionConfirmed("s-1", on: 1)
        fixture.state.rotationDue(from: 1)
        fixture.state.cancel("s-1")
        let new = fixture.open(2)
        #expect(old.requestedEnding != nil)
        #expect(new.closed?.reason == "idle")
    }

    @Test("a link turned away because another is primary leaves the state connected, as the supervisor reports nothing for it")
    func strayLinkKeepsTheStateConnected() async throws {
        let fixture = try StateFixture()
        _ = fixture.add("s-1")
        _ = fixture.open(1)
        fixture.states.update(.connecting)  // the supervisor's report as it opened link 2 (a successor given up too late)
        let stray = fixture.open(2)
        #expect(stray.closed?.reason == "rotation abandoned")
        #expect(fixture.states.current == .connected)
        #expect(fixture.state.linkEnded(2, report: LinkReport(end: .requested, acknowledged: true)) == .replaced)
        fixture.states.update(.connecting)  // another link, which fails before it opens
        fixture.state.linkCreated(3)
        #expect(fixture.state.linkEnded(3, report: LinkReport(end: .openFailed("refused", authRejected: false))) == .replaced)
        #expect(fixture.states.current == .connected)
    }
}
