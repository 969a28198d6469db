import BackendNotifier
import Foundation
import SubscriberCore

/// A window in which one side's notifier said events may have been missed, from its `connectionEvents()`:
/// `resumed(gap:)`, `eventsLost` (its loss window) or `transportSwitched` (every stream).
public struct ReportedGap: Sendable, Codable, Equatable {
    /// Which event reported it: `resumed`, `eventsLost` or `transportSwitched`.
    public var kind: String
    /// The stream or upstream it concerns (`device`, `devicePresence`, …); `nil` for every stream (a switch).
    public var stream: String?
    /// The transport that reported it.
    public var transport: String
    /// The window's start (ISO 8601).
    public var start: String
    /// The window's end (ISO 8601).
    public var end: String
    /// The window's length in milliseconds (``WindowFigure``).
    public var milliseconds: Int
    /// For `eventsLost`: how many events and why.
    public var lost: String?
    /// The window itself.
    public var window: GapWindow { GapWindow(start: startDate, end: endDate) }
    let startDate: Date
    let endDate: Date

    private enum CodingKeys: String, CodingKey { case kind, stream, transport, start, end, milliseconds, lost }

    /// A gap of `kind` for `stream` on `transport`.
    public init(kind: String, stream: String?, transport: String, window: GapWindow, lost: String? = nil) {
        self.kind = kind
        self.stream = stream
        self.transport = transport
        self.start = WindowFigure.stamp(window.start)
        self.end = WindowFigure.stamp(window.end)
        self.milliseconds = WindowFigure.milliseconds(window)
        self.lost = lost
        self.startDate = window.start
        self.endDate = window.end
    }

    /// Reads a gap back (the instants from their ISO 8601 text).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(String.self, forKey: .kind)
        stream = try container.decodeIfPresent(String.self, forKey: .stream)
        transport = try container.decode(String.self, forKey: .transport)
        start = try container.decode(String.self, forKey: .start)
        end = try container.decode(String.self, forKey: .end)
        milliseconds = try container.decode(Int.self, forKey: .milliseconds)
        lost = try container.decodeIfPresent(String.self, forKey: .lost)
        startDate = ISO8601Timestamp.date(from: start) ?? .distantPast
        endDate = ISO8601Timestamp.date(from: end) ?? .distantPast
    }

    /// Writes the gap (without the private instants).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(stream, forKey: .stream)
        try container.encode(transport, forKey: .transport)
        try container.encode(start, forKey: .start)
        try container.encode(end, forKey: .end)
        try container.encode(milliseconds, forKey: .milliseconds)
        try container.encodeIfPresent(lost, forKey: .lost)
    }

    /// The gap a connection event reports, or `nil` for events that report none.
    public init?(_ event: NotifierConnectionEvent) {
        switch event {
        case .resumed(let stream, let transport, let gap):
            self.init(kind: "resumed", stream: stream, transport: transport, window: gap)
        case .eventsLost(let stream, let transport, let loss):
            self.init(
                kind: "eventsLost", stream: stream, transport: transport, window: loss.window,
                lost: "\(loss.count) (\(loss.reason.rawValue))")
        case .transportSwitched(_, let to, let gap, _):
            self.init(kind: "transportSwitched", stream: nil, transport: to, window: gap)
        default:
            return nil
        }
    }

    /// Whether the gap concerns events of `stream` (one of the nine): its own name, its upstream's, or every stream.
    public func covers(stream eventStream: String) -> Bool {
        guard let stream else { return true }
        return stream == eventStream || stream == ObservedEvent.upstream(of: eventStream)
    }

    /// Whether `date` lies inside the window, with `slack` seconds either side.
    public func contains(_ date: Date, slack: TimeInterval = 0.05) -> Bool {
        startDate.addingTimeInterval(-slack) <= date && date <= endDate.addingTimeInterval(slack)
    }

    /// One line: `graphql resumed device: 2034 ms (… ... …)`.
    public var summary: String {
        "\(transport) \(kind)\(stream.map { " \($0)" } ?? ""): \(WindowFigure.text(window))\(lost.map { ", lost \($0)" } ?? "")"
    }
}
