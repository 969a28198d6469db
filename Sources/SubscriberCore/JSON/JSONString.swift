/// Canonical JSON text for strings and flat objects, byte-for-byte predictable.
///
/// Used wherever the exact bytes matter: bodies signed with SigV4 must be re-serialised identically by the server,
/// so `/`, `<`, `>` and non-ASCII characters are never escaped (as `JSON.stringify` does), and only `"`, `\` and
/// control characters are.
package enum JSONString {
    /// `value` as a JSON string literal, quotes included.
    package static func quoted(_ value: String) -> String {
        var output = "\""
        output.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
        return output
    }

    /// A JSON object whose members are given as already-encoded JSON values, in the given order.
    package static func object(_ members: [(key: String, json: String)]) -> String {
        "{" + members.map { quoted($0.key) + ":" + $0.json }.joined(separator: ",") + "}"
    }

    /// A JSON object of string members with keys sorted, for auth objects.
    package static func sortedStringObject(_ members: [String: String]) -> String {
        object(members.sorted { $0.key < $1.key }.map { (key: $0.key, json: quoted($0.value)) })
    }

    /// A JSON array of already-encoded JSON values.
    package static func array(_ jsonValues: [String]) -> String {
        "[" + jsonValues.joined(separator: ",") + "]"
    }
}
