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
        if let date = fastDate(text) { return date }
        if let date = try? withFraction.parse(text) { return date }
        return try? withoutFraction.parse(text)
    }

    /// The common shapes (`2025-01-15T10:30:00Z`, with up to 9 fraction digits, `Z` or `±HH:MM`) parsed by hand:
    /// every event carries a timestamp, and the format styles cost more than the rest of an event's decoding.
    /// Anything else, or any field out of range, is left to the format styles.
    static func fastDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
            else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<(start + count) {
                    let digit = Int(bytes[index]) - 48
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
                let minute = number(14, 2), let second = number(17, 2), (1900...9999).contains(year), (1...12).contains(month),
                day >= 1, day <= daysIn(month: month, year: year), hour <= 23, minute <= 59, second <= 59
            else { return nil }
            var index = 19
            var fraction = 0.0
            if bytes[index] == UInt8(ascii: ".") {
                var digits = 0
                var value = 0
                index += 1
                while index < bytes.count, let digit = number(index, 1) {
                    value = value * 10 + digit
                    digits += 1
                    index += 1
                }
                guard (1...9).contains(digits) else { return nil }
                fraction = Double(value) / pow(10, Double(digits))
            }
            var offset = 0
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "Z"):
                index += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"), let hours = number(index + 1, 2),
                    let minutes = number(index + 4, 2), hours <= 23, minutes <= 59
                else { return nil }
                offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
                index += 6
            default:
                return nil
            }
            guard index == bytes.count else { return nil }
            let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: Double(seconds) + fraction)
        }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `date` in UTC as ISO 8601, with milliseconds unless `fractionalSeconds` is `false`
    /// (`2025-01-15T10:30:00.123Z`).
    public static func string(from date: Date, fractionalSeconds: Bool = true) -> String {
        fractionalSeconds ? withFraction.format(date) : withoutFraction.format(date)
    }
}
