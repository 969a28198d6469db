import Foundation
import RealtimeDrill
import SubscriberCore
import Testing

/// The observed rollback's judgement (`DrillRunner.judgeObserved`), on recorded events without sockets: what the
/// references saw against what the drilled notifier delivered, at the edges of the run.
@Suite("Observed rollback judgement")
struct ObservedRollbackJudgementTests {
    static let start = ParityMatcherTests.t0.addingTimeInterval(100)
    static let end = start.addingTimeInterval(3)

    /// A presence event stamped `stamp` seconds after `start`, arriving `arrival` seconds after it.
    static func event(stamp: Double, arrival: Double) -> ObservedEvent {
        ParityMatcherTests.event(stamp: 100 + stamp, arrival: 100 + arrival)
    }

    static func presence(_ streams: [RollbackReport.Stream]) throws -> RollbackReport.Stream {
        try #require(streams.first { $0.stream == "devicePresence" })
    }

    @Test("a copy the drilled notifier got just before the start answers the references' copy just after it")
    func drilledCopyBeforeTheStart() throws {
        let seen = [Self.event(stamp: -0.01, arrival: 0.002)]
        let delivered = [Self.event(stamp: -0.01, arrival: -0.003)]
        let streams = DrillRunner.judgeObserved(
            seen: seen, delivered: delivered, windows: [], start: Self.start, end: Self.end, tolerance: 1)
        let presence = try Self.presence(streams)
        #expect(presence.published == 1)
        #expect(presence.received == 1)
        #expect(presence.missing == 0)
        #expect(presence.unexpected == 0)
    }

    @Test("a delivery before the start that answers nothing is not counted as unexpected")
    func unansweredDeliveryBeforeTheStart() throws {
        let delivered = [Self.event(stamp: -0.5, arrival: -0.4)]
        let streams = DrillRunner.judgeObserved(
            seen: [], delivered: delivered, windows: [], start: Self.start, end: Self.end, tolerance: 1)
        let presence = try Self.presence(streams)
        #expect(presence.received == 0)
        #expect(presence.unexpected == 0)
    }

    @Test("an event never delivered is missing, outside the windows unless a reported window holds its instant")
    func neverDelivered() throws {
        let seen = [Self.event(stamp: 1, arrival: 1.01)]
        let outside = try Self.presence(
            DrillRunner.judgeObserved(seen: seen, delivered: [], windows: [], start: Self.start, end: Self.end, tolerance: 1))
        #expect(outside.missing == 1)
        #expect(outside.missingOutsideWindows == 1)
        let listed = try #require(outside.missingOutsideWindowsEvents)
        #expect(listed.count == 1 && listed[0].hasPrefix("device:cam-1 "))

        let window = ParityMatcherTests.gap("transportSwitched", stream: nil, transport: "graphql", from: 100.5, to: 101.5)
        let inside = try Self.presence(
            DrillRunner.judgeObserved(seen: seen, delivered: [], windows: [window], start: Self.start, end: Self.end, tolerance: 1))
        #expect(inside.missing == 1)
        #expect(inside.missingOutsideWindows == 0)
        #expect(inside.missingOutsideWindowsEvents == nil)
    }

    @Test("a copy delivered long before the start (beyond the tolerance) does not answer")
    func drilledCopyFarBeforeTheStart() throws {
        let seen = [Self.event(stamp: -0.01, arrival: 0.002)]
        let delivered = [Self.event(stamp: -0.01, arrival: -1.5)]
        let presence = try Self.presence(
            DrillRunner.judgeObserved(seen: seen, delivered: delivered, windows: [], start: Self.start, end: Self.end, tolerance: 1))
        #expect(presence.missing == 1)
    }
}
