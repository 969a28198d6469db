import Foundation
import Logging
import Testing

@testable import SubscriberCore

/// The liveness rules both transports share (``SubscriptionRecord``): what a confirmation reports, and where a gap
/// starts when links are lost one after another.
@Suite("SubscriptionLiveness")
struct SubscriptionLivenessTests {
    struct Record: SubscriptionRecord {
        let sink: SubscriptionSink
        var liveness = SubscriptionLiveness.pending
    }

    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    /// What a confirmation at `seconds` reports: `nil` for nothing.
    static func confirm(_ record: inout Record, at seconds: TimeInterval) -> SubscriptionEvent? {
        guard case .yield(_, let event)? = record.confirm(now: at(seconds)) else { return nil }
        return event
    }

    static func record() -> Record {
        Record(sink: SubscriptionSink.make(bufferLimit: 4, label: "liveness", logger: Logger(label: "test")).sink)
    }

    @Test("live once; a loss before the first confirmation opens no gap")
    func firstConfirmation() {
        var record = Self.record()
        record.interrupt(at: Self.at(1))
        #expect(record.liveness == .pending, "nothing was delivered yet, so nothing was missed")
        #expect(!record.isLive)
        #expect(Self.confirm(&record, at: 2) == .live)
        #expect(record.isLive)
        #expect(Self.confirm(&record, at: 3) == nil, "live already")
    }

    @Test("after a loss, resumed with the gap from the earliest loss to the confirmation")
    func resumedAfterLosses() {
        var record = Self.record()
        _ = Self.confirm(&record, at: 0)
        record.interrupt(at: Self.at(5))
        record.interrupt(at: Self.at(3))
        record.interrupt(at: Self.at(7))
        #expect(record.liveness == .interrupted(since: Self.at(3)))
        #expect(Self.confirm(&record, at: 9) == .resumed(gap: GapWindow(start: Self.at(3), end: Self.at(9))))
        #expect(Self.confirm(&record, at: 10) == nil)
        record.interrupt(at: Self.at(11))
        #expect(Self.confirm(&record, at: 12) == .resumed(gap: GapWindow(start: Self.at(11), end: Self.at(12))), "a new gap")
    }
}
