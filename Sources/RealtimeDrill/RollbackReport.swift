import BackendNotifier
import Foundation
import SubscriberCore

/// The rollback drill's result: one notifier, switched AppSync → GraphQL → AppSync while events flow.
public struct RollbackReport: Sendable, Codable, Equatable {
    /// One stream.
    public struct Stream: Sendable, Codable, Equatable {
        /// The stream's name.
        public var stream: String
        /// Events this stream should deliver: published by the drill (basis `published`), or seen by either reference
        /// notifier (basis `observed`).
        public var published: Int
        /// Values received (duplicates included).
        public var received: Int
        /// Events never received.
        public var missing: Int
        /// Of those, the ones outside every window the notifier reported (must be zero).
        public var missingOutsideWindows: Int
        /// Values received more than once (must be zero).
        public var duplicated: Int
        /// Basis `observed`: values neither reference notifier saw (not judged: a reference may miss what the drilled
        /// notifier got); `nil` with basis `published`.
        public var unexpected: Int?
        /// Basis `observed`: each event missing outside every window, as `entity timestamp, arrived at` (so a failed
        /// judgement shows which events, and when); `nil` with basis `published` or when none is missing.
        public var missingOutsideWindowsEvents: [String]?

        /// Creates a row.
        public init(
            stream: String, published: Int, received: Int, missing: Int, missingOutsideWindows: Int, duplicated: Int,
            unexpected: Int? = nil,
            missingOutsideWindowsEvents: [String]? = nil
        ) {
            self.stream = stream
            self.published = published
            self.received = received
            self.missing = missing
            self.missingOutsideWindows = missingOutsideWindows
            self.duplicated = duplicated
            self.unexpected = unexpected
            self.missingOutsideWindowsEvents = missingOutsideWindowsEvents
        }
    }

    /// One transport switch as the notifier reported it (its `transportSwitched` event: the one source of the window).
    public struct Switch: Sendable, Codable, Equatable {
        /// From which transport.
        public var from: String
        /// To which transport.
        public var to: String
        /// The reported window's start (ISO 8601).
        public var windowStart: String
        /// The reported window's end (ISO 8601).
        public var windowEnd: String
        /// The reported window's length in milliseconds (``WindowFigure``).
        public var windowMilliseconds: Int

        /// The switch the notifier reported with `window`.
        public init(from: String, to: String, window: GapWindow) {
            self.from = from
            self.to = to
            self.windowStart = WindowFigure.stamp(window.start)
            self.windowEnd = WindowFigure.stamp(window.end)
            self.windowMilliseconds = WindowFigure.milliseconds(window)
        }

        /// The reported window, read back from ``windowStart`` and ``windowEnd`` (to the millisecond).
        public var window: GapWindow {
            GapWindow(
                start: ISO8601Timestamp.date(from: windowStart) ?? .distantPast,
                end: ISO8601Timestamp.date(from: windowEnd) ?? .distantPast)
        }

        /// The line every report prints for this switch: `switch appsync -> graphql: window 4033 ms (… ... …)`.
        public var summary: String {
            "switch \(from) -> \(to): window \(WindowFigure.text(milliseconds: windowMilliseconds, start: windowStart, end: windowEnd))"
        }
    }

    /// `published`: judged against the events the drill published (trigger `admin`); `observed`: against what two
    /// reference notifiers saw (triggers `command` and `none`).
    public var basis: String
    /// Every stream.
    public var streams: [Stream]
    /// The switches.
    public var switches: [Switch]
    /// Publish-to-consumer latency percentiles over all received values, in milliseconds (basis `published` only: the
    /// drill knows when it published).
    public var latencyP50Milliseconds: Double?
    /// The 99th percentile.
    public var latencyP99Milliseconds: Double?

    /// Creates a report.
    public init(basis: String, streams: [Stream], switches: [Switch], latencyP50Milliseconds: Double?, latencyP99Milliseconds: Double?) {
        self.basis = basis
        self.streams = streams
        self.switches = switches
        self.latencyP50Milliseconds = latencyP50Milliseconds
        self.latencyP99Milliseconds = latencyP99Milliseconds
    }

    /// Events the streams should have delivered.
    public var expected: Int { streams.reduce(0) { $0 + $1.published } }
    /// Whether both switches happened, nothing was lost outside the reported windows and nothing was delivered twice.
    public var passed: Bool { streams.allSatisfy { $0.missingOutsideWindows == 0 && $0.duplicated == 0 } && switches.count == 2 }
}
