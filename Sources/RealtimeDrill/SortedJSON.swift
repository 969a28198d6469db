import Foundation

/// One-line JSON with sorted keys and unescaped slashes: the one form in which the drill records, compares and prints
/// values, so that equal values always read the same.
enum SortedJSON {
    /// `value` as sorted one-line JSON.
    static func text(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
