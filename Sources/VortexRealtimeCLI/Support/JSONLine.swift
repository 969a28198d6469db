import Foundation
import SubscriberCore

/// Builds the CLI's one-line JSON outputs.
enum JSONLine {
    /// `json` if it is a JSON value, else the text as a JSON string (so every line stays valid JSON).
    static func embed(_ json: Data) -> String {
        if (try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])) != nil {
            return String(decoding: json, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return JSONString.quoted(String(decoding: json, as: UTF8.self))
    }

    /// Encodes an `Encodable` value with sorted keys on one line.
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
