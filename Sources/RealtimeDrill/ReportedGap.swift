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
    /// The window itself, read back from ``start`` and ``end`` (to the millisecond, as the reports write it).
    public var window: GapWindow {
        GapWindow(start: ISO8601Timestamp.date(from: start) ?? .distantPast, end: ISO8601Timestamp.date(from: end) ?? .distantPast)
    }

    /// A gap of `kind` for `stream` on `transport`.
    public init(kind: String, stream: String?, transport: String, window: GapWindow, lost: String? = nil) {
        self.kind = kind
        self.stream = stream
        self.transport = transport
        self.start = WindowFigure.stamp(window.start)
        self.end = WindowFigure.stamp(window.end)
        self.milliseconds = WindowFigure.milliseconds(window)
        self.lost = lost
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
        let window = window
        return window.start.addingTimeInterval(-slack) <= date && date <= window.end.addingTimeInterval(slack)
    }

    /// One line: `graphql resumed device: 2034 ms (… ... …)`.
    public var summary: String {
        "\(transport) \(kind)\(stream.map { " \($0)" } ?? ""): \(WindowFigure.text(milliseconds: milliseconds, start: start, end: end))\(lost.map { ", lost \($0)" } ?? "")"
    }
}
