import SubscriberCore

/// The `HOST:PORT` the server listens on, known once it is bound (port 0 picks a free port). Auth objects must carry
/// exactly this as `host` — except when the server listens on a wildcard address (`0.0.0.0`, `::`), where any host
/// with the right port is the server's own (devices on the LAN reach it by the machine's address).
final class ServerAddress: Sendable {
    private struct Bound {
        var hostAndPort: String
        var port: Int
        var wildcard: Bool
    }

    private let value = Locked<Bound?>(nil)

    /// `HOST:PORT`, or `nil` before the server is listening.
    var hostAndPort: String? { value.withLock { $0?.hostAndPort } }

    func set(host: String, port: Int) {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let wildcard = ["0.0.0.0", "::", "[::]"].contains(host)
        value.withLock { $0 = Bound(hostAndPort: "\(bracketed):\(port)", port: port, wildcard: wildcard) }
    }

    /// Whether `host` (from an auth object) names this server. On port 80 the port may be left out, as HTTP clients
    /// (and `AppSyncAuthorizer`) write the `Host` of a default port.
    func accepts(_ host: String) -> Bool {
        guard let bound = value.withLock({ $0 }) else { return false }
        if host.lowercased() == bound.hostAndPort.lowercased() { return true }
        if bound.port == 80, (host + ":80").lowercased() == bound.hostAndPort.lowercased() { return true }
        guard bound.wildcard, let colon = host.lastIndex(of: ":") else { return false }
        return Int(host[host.index(after: colon)...]) == bound.port
    }
}
