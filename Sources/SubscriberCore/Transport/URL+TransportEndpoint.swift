import Foundation

extension URL {
    /// Checks a transport's endpoint URL as both transports do: the `secure` scheme, or `insecure` on a loopback host
    /// only (the local backend), a host, and a port (if any) of 1–65535.
    ///
    /// - Returns: The host, and whether the scheme is `secure`.
    /// - Throws: ``RealtimeError/invalidEndpoint(_:)`` naming the URL and what is wrong with it.
    package func checkTransportEndpoint(secure: String, insecure: String) throws(RealtimeError) -> (host: String, secure: Bool) {
        guard let scheme = scheme?.lowercased(), scheme == secure || scheme == insecure else {
            throw .invalidEndpoint("\(absoluteString): expected \(secure):// (or \(insecure):// on loopback)")
        }
        guard let host, !host.isEmpty else { throw .invalidEndpoint("\(absoluteString) has no host") }
        if let port, !(1...65_535).contains(port) { throw .invalidEndpoint("\(absoluteString): port \(port) is not 1–65535") }
        if scheme == insecure && !LoopbackHost.contains(host) {
            throw .invalidEndpoint("\(absoluteString): \(insecure):// is allowed only for loopback hosts; use \(secure)://")
        }
        return (host, scheme == secure)
    }
}
