import Foundation

/// Parses and writes the ISO 8601 timestamps the events carry (`timestamp`, `revokedAt`, `createdAt`).
///
/// Parsing accepts the form with fractional seconds (`2025-01-15T10:30:00.123Z`) and without
/// (`2025-01-15T10:30:00Z`), with `Z` or a numeric offset (`+09:00`). A date without a time or a time without
/// a zone is rejected.
public enum ISO8601Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    /// The instant `text` names, or `nil` when `text` is `nil` or not an ISO 8601 date-time.
    public static func date(from text: String?) -> Date? {
        guard let text else { return nil }
        if let date = try? withFraction.parse(text) { return date }
        return try? withoutFraction.parse(text)
    }

    /// `date` in UTC as ISO 8601, with milliseconds unless `fractionalSeconds` is `false`
    /// (`2025-01-15T10:30:00.123Z`).
    public static func string(from date: Date, fractionalSeconds: Bool = true) -> String {
        fractionalSeconds ? withFraction.format(date) : withoutFraction.format(date)
    }
}
