import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 10 item 4: every loss reaches `connectionEvents()` with stream, count and window: transport losses, observer
/// buffer drops and undecodable events.
@Suite("BackendNotifier loss reporting")
struct NotifierLossReportingTests {
    static func losses(_ events: ValueProbe<NotifierConnectionEvent>) -> [(String, LossReport)] {
        events.received.compactMap { event in
            if case .eventsLost(let stream, _, let loss) = event { return (stream, loss) }
            return nil
        }
    }

    @Test("a full observer buffer reports eventsLost(bufferOverflow) for its stream with the count dropped")
    func observerDrops() async throws {
        let harness = NotifierHarness { $0.bufferPolicy = ObserverBufferPolicy(limit: 2, overflow: .dropOldest) }
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let stream = await harness.notifier.planValues()
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        for index in 0..<5 {
            upstream.send(json: #"{"eventType":"organization/planChanged","timestamp":"\#(Samples.timestamp)","orgId":"o-\#(index)"}"#)
        }
        try await withTestTimeout(5, "three drops reported") {
            while Self.losses(events).reduce(0, { $0 + $1.1.count }) < 3 { try await TestTime.pollPause() }
        }
        let losses = Self.losses(events)
        #expect(losses.allSatisfy { $0.0 == "plan" && $0.1.reason == .bufferOverflow && $0.1.window.start <= $0.1.window.end })
        #expect(losses.reduce(0) { $0 + $1.1.count } == 3)
        _ = stream
    }

    @Test("a drop-oldest buffer's loss window starts before the dropped value was queued, not when it was dropped")
    func dropOldestWindowCoversTheDroppedValue() async throws {
        let harness = NotifierHarness { $0.bufferPolicy = ObserverBufferPolicy(limit: 2, overflow: .dropOldest) }
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let plans = await harness.notifier.planValues()  // never read: its buffer keeps A and B until C pushes A out
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        func send(_ org: String) {
            upstream.send(json: #"{"eventType":"organization/planChanged","timestamp":"\#(Samples.timestamp)","orgId":"\#(org)"}"#)
        }
        @Sendable func delivered() async -> Int { await harness.notifier.statistics().streams["plan"]?.delivered ?? 0 }
        let queuedA = Date(timeIntervalSince1970: 1_700_000_000)  // the harness's wall clock before any advance
        send("A")
        send("B")
        try await withTestTimeout(5, "A and B queued") { while await delivered() < 2 { try await TestTime.pollPause() } }
        harness.clock.advance(by: .seconds(60))
        send("C")
        try await withTestTimeout(5, "the drop reported") { while Self.losses(events).isEmpty { try await TestTime.pollPause() } }
        let losses = Self.losses(events)
        #expect(losses.count == 1 && losses[0].0 == "plan" && losses[0].1.count == 1 && losses[0].1.reason == .bufferOverflow)
        let window = try #require(losses.first?.1.window)
        // A was queued at +0 s and dropped at +60 s: the app must refetch from before +0 s (the observer subscribed
        // then), not from +58 s.
        #expect(window.start <= queuedA, "window \(window) misses A, queued at \(queuedA)")
        #expect(window.start == queuedA.addingTimeInterval(-2) && window.end == queuedA.addingTimeInterval(60))
        _ = plans
    }

    @Test("a connection-events reader that falls behind loses no loss report: reports of one stream merge when it is full")
    func lossReportsSurviveASlowEventsReader() async throws {
        let harness = NotifierHarness { $0.bufferPolicy = ObserverBufferPolicy(limit: 1, overflow: .dropOldest) }
        let events = await harness.notifier.connectionEvents()  // not read until the drops are done
        let plans = await harness.notifier.planValues()  // never read: all but one value dropped
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        let sent = 400  // more reports than the 256 the events buffer holds
        for index in 0..<sent {
            upstream.send(json: #"{"eventType":"organization/planChanged","timestamp":"\#(Samples.timestamp)","orgId":"o-\#(index)"}"#)
        }
        try await withTestTimeout(10, "every drop counted") {
            while await harness.notifier.statistics().streams["plan"]?.dropped ?? 0 < sent - 1 { try await TestTime.pollPause() }
        }
        let reported = try await withTestTimeout(10, "every drop reported") {
            var reported = 0
            for await event in events {
                if case .eventsLost("plan", _, let loss) = event {
                    #expect(loss.reason == .bufferOverflow && loss.window.start <= loss.window.end)
                    reported += loss.count
                }
                if reported >= sent - 1 { break }
            }
            return reported
        }
        #expect(reported == sent - 1)
        _ = plans
    }

    @Test("the connection events' overflow rule: losses and gaps merge, live and suspended make room, the rest is kept")
    func connectionEventOverflowRule() async throws {
        func window(_ start: Double, _ end: Double) -> GapWindow {
            GapWindow(start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end))
        }
        func lost(_ stream: String, _ n: Int, _ a: Double, _ b: Double, _ why: LossReport.Reason = .bufferOverflow) -> Event {
            .eventsLost(stream: stream, transport: "appsync", loss: LossReport(count: n, window: window(a, b), reason: why))
        }
        let buffer = StreamBuffer<NotifierConnectionEvent>(limit: 4, overflowRule: NotifierConnectionEvent.overflowRule)
        let switched = NotifierConnectionEvent.transportSwitched(from: "appsync", to: "graphql", gap: window(5, 6), reason: .requested)
        for event in [
            .live(stream: "plan", transport: "appsync"), lost("plan", 1, 1, 2),
            .resumed(stream: "role", transport: "appsync", gap: window(3, 4)),
            switched,
        ] {
            #expect(buffer.enqueue(event) == .enqueued)
        }
        #expect(buffer.enqueue(lost("plan", 2, 7, 8)) == .enqueued)  // merged into the queued plan loss
        #expect(buffer.enqueue(lost("plan", 1, 9, 9, .undecodable)) == .dropped)  // another reason: live makes room
        #expect(buffer.enqueue(.resumed(stream: "role", transport: "appsync", gap: window(0, 10))) == .enqueued)  // merged
        #expect(buffer.enqueue(.suspended) == .dropped)  // expendable, and nothing expendable is queued
        #expect(buffer.enqueue(.sessionExpired) == .enqueued)  // kept beyond the limit
        buffer.finish()
        var received: [NotifierConnectionEvent] = []
        for await event in buffer.makeStream() { received.append(event) }
        #expect(
            received == [
                lost("plan", 3, 1, 8), .resumed(stream: "role", transport: "appsync", gap: window(0, 10)), switched,
                lost("plan", 1, 9, 9, .undecodable), .sessionExpired,
            ])
    }

    @Test("an undecodable event reports eventsLost(undecodable) for its upstream, over the configured lossMargin")
    func undecodable() async throws {
        let harness = NotifierHarness { $0.lossMargin = .seconds(7) }
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let revokes = ValueProbe(await harness.notifier.revokeValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("tokenRevoked"))
        upstream.send(json: "not json")
        upstream.send(json: Samples.revoke)
        #expect(try await revokes.next().userId == "u-1")
        let event = try await events.next()
        guard case .eventsLost(let stream, let transport, let loss) = event else {
            Issue.record("expected eventsLost, got \(event)"); return
        }
        #expect(stream == "revoke" && transport == "appsync" && loss.count == 1 && loss.reason == .undecodable)
        #expect(loss.window.duration == 7)
    }

    typealias Event = NotifierConnectionEvent

    @Test("a transport's loss report (gap in a live subscription, buffer overflow) is forwarded with its stream")
    func transportLoss() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        _ = ValueProbe(await harness.notifier.roleValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        let window = GapWindow(start: Date(timeIntervalSince1970: 1), end: Date(timeIntervalSince1970: 2))
        upstream.send(.lost(LossReport(count: 7, window: window, reason: .bufferOverflow)))
        #expect(
            try await events.next()
                == .eventsLost(stream: "role", transport: "appsync", loss: LossReport(count: 7, window: window, reason: .bufferOverflow)))
    }
}
