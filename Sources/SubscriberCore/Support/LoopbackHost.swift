import Foundation

/// Which hosts count as this machine, where unencrypted `ws://`/`http://` is allowed (for the local backend).
package enum LoopbackHost {
    /// Whether `host` is `localhost`, `::1` or an IPv4 literal in 127.0.0.0/8 (brackets allowed).
    /// A DNS name that merely starts with `127.` is not loopback.
    package static func contains(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: ["[", "]"]).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4,
            octets.allSatisfy({ $0.count >= 1 && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) && Int($0)! <= 255 }
            )
        else { return false }
        return octets[0] == "127"
    }
}
