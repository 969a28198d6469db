import Foundation

/// A request's URL as every connector checks it before it opens anything: `ws://` or `wss://` with a host. Errors and
/// logs name it redacted, because its query may carry credentials.
package struct WebSocketURL: Sendable {
    /// The URL's parts.
    package let components: URLComponents
    /// `wss://`.
    package let secure: Bool
    /// The host, as `components` gives it (an IPv6 literal may keep its brackets).
    package let host: String
    /// Scheme, host, port and path only: queries may carry credentials, so they are never logged.
    package let redacted: String

    /// Checks `url`.
    ///
    /// - Throws: ``WebSocketSeamError/invalidURL(_:)``, naming the URL redacted, when it has no scheme or host, its
    ///   scheme is not `ws` or `wss`, or its port is not 1–65535.
    package init(_ url: URL) throws(WebSocketSeamError) {
        let port = url.port.map { ":\($0)" } ?? ""
        redacted = "\(url.scheme ?? "?")://\(url.host ?? "?")\(port)\(url.path)"
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else {
            throw .invalidURL("no scheme or host in \(redacted)")
        }
        guard scheme == "ws" || scheme == "wss" else {
            throw .invalidURL("scheme \"\(scheme)\" is not ws or wss in \(redacted)")
        }
        // Foundation parses any digits as a port; a socket layer would wrap 70000 to 4464, or trap.
        if let port = components.port, !(1...65_535).contains(port) {
            throw .invalidURL("port \(port) is not 1–65535 in \(redacted)")
        }
        self.components = components
        secure = scheme == "wss"
        self.host = host
    }
}
