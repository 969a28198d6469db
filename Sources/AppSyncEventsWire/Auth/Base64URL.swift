import Foundation

/// Base64url (RFC 4648 §5), as AppSync Events writes the auth object of the `header-` subprotocol: the client encodes
/// it, the local backend decodes it (and signs its development JWTs with it).
package enum Base64URL {
    /// Base64url without padding (`+` to `-`, `/` to `_`, `=` stripped), as the service expects in the subprotocol.
    package static func encode(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes base64url with or without padding; `nil` when malformed.
    package static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
