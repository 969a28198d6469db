import Foundation

/// Tells wall-clock time for gap windows and latency; injectable so tests control it.
public struct WallClock: Sendable {
    private let nowProvider: @Sendable () -> Date

    /// Creates a wall clock from a time source.
    public init(_ now: @escaping @Sendable () -> Date) { self.nowProvider = now }

    /// The system clock.
    public static let system = WallClock { Date() }

    /// The current time.
    public func now() -> Date { nowProvider() }
}
