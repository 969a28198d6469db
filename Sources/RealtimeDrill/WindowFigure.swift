import BackendNotifier
import Foundation
import SubscriberCore

/// The one way every summary line (demo, drill, parity) states a window the notifier reported: its length in whole
/// milliseconds and its bounds, from the `GapWindow` of a `transportSwitched`, `resumed` or `eventsLost` event.
/// Nothing else (not the time a switch call took) is shown as a window, so two lines about one switch cannot disagree.
public enum WindowFigure {
    /// The window's length in whole milliseconds.
    public static func milliseconds(_ window: GapWindow) -> Int { Int((window.duration * 1000).rounded()) }

    /// `2034 ms (2025-01-31T09:15:00.100Z ... 2025-01-31T09:15:02.134Z)`, from a report's stored figures (its window read
    /// back from the stamps could be a millisecond off).
    public static func text(milliseconds: Int, start: String, end: String) -> String { "\(milliseconds) ms (\(start) ... \(end))" }

    /// ISO 8601 with milliseconds, as the reports write instants.
    public static func stamp(_ date: Date) -> String { ISO8601Timestamp.string(from: date, fractionalSeconds: true) }
}
