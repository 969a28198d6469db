import Foundation
import SubscriberCore

/// The two URLs of an AppSync Event API, each derived from the other.
///
/// AWS default domains swap `appsync-api` and `appsync-realtime-api`; custom domains keep their host. The `host` in
/// every auth object is the HTTP host (the service checks it). Plain `http`/`ws` is accepted only for loopback hosts,
/// for the local backend.
public struct AppSyncEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// `https://<host>/event`, where HTTP publishes go.
    public let httpURL: URL
    /// `wss://<host>/event/realtime`, the WebSocket.
    public let realtimeURL: URL
    /// The HTTP host as it goes into auth objects, with the port when one is given explicitly.
    public let host: String

    /// Parses either URL: `http(s)://…/event` or `ws(s)://…/event/realtime`.
    public init(_ text: String) throws(RealtimeError) {
        guard let url = URL(string: text.trimmingCharacters(in: .whitespaces)), let scheme = url.scheme?.lowercased() else {
            throw .invalidEndpoint("\"\(text)\" is not a URL")
        }
        switch scheme {
        case "http", "https": try self.init(httpURL: url)
        case "ws", "wss": try self.init(realtimeURL: url)
        default: throw .invalidEndpoint("scheme \"\(scheme)\" is not http, https, ws or wss")
        }
    }

    /// Derives the endpoint from the HTTP URL, which must end in `/event`.
    public init(httpURL: URL) throws(RealtimeError) {
        let parts = try Self.parts(of: httpURL, secure: "https", insecure: "http", path: "/event")
        let realtimeHost = Self.swapHost(parts.host, from: ".appsync-api.", to: ".appsync-realtime-api.")
        self.httpURL = httpURL
        self.realtimeURL = try Self.url(scheme: parts.secure ? "wss" : "ws", host: realtimeHost, port: parts.port, path: "/event/realtime")
        self.host = Self.authHost(parts.host, parts.port)
    }

    /// Derives the endpoint from the real-time URL, which must end in `/event/realtime`.
    public init(realtimeURL: URL) throws(RealtimeError) {
        let parts = try Self.parts(of: realtimeURL, secure: "wss", insecure: "ws", path: "/event/realtime")
        let httpHost = Self.swapHost(parts.host, from: ".appsync-realtime-api.", to: ".appsync-api.")
        self.realtimeURL = realtimeURL
        self.httpURL = try Self.url(scheme: parts.secure ? "https" : "http", host: httpHost, port: parts.port, path: "/event")
        self.host = Self.authHost(httpHost, parts.port)
    }

    public var description: String { httpURL.absoluteString }

    /// Whether `host` is a loopback address, where unencrypted connections are allowed.
    package static func isLoopback(_ host: String) -> Bool { LoopbackHost.contains(host) }

    private struct Parts {
        var host: String
        var port: Int?
        var secure: Bool
    }

    private static func parts(of url: URL, secure: String, insecure: String, path: String) throws(RealtimeError) -> Parts {
        let (host, isSecure) = try url.checkTransportEndpoint(secure: secure, insecure: insecure)
        let actualPath = url.path.hasSuffix("/") && url.path.count > 1 ? String(url.path.dropLast()) : url.path
        guard actualPath == path else {
            throw .invalidEndpoint("\(url.absoluteString): the path must be \(path)")
        }
        guard url.query == nil, url.user == nil else {
            throw .invalidEndpoint("\(url.absoluteString): no query or credentials allowed in the URL")
        }
        return Parts(host: host, port: url.port, secure: isSecure)
    }

    private static func swapHost(_ host: String, from: String, to: String) -> String {
        // Only AWS default domains change; a custom domain serves both URLs on one host.
        guard host.hasSuffix(".amazonaws.com") || host.hasSuffix(".amazonaws.com.cn"), host.contains(from) else { return host }
        return host.replacingOccurrences(of: from, with: to)
    }

    private static func authHost(_ host: String, _ port: Int?) -> String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    private static func url(scheme: String, host: String, port: Int?, path: String) throws(RealtimeError) -> URL {
        var components = URLComponents()
        components.scheme = scheme
        // URLComponents wants an IPv6 literal in brackets, as it appears in a URL.
        if host.contains(":") {
            components.percentEncodedHost = host.hasPrefix("[") ? host : "[\(host)]"
        } else {
            components.host = host
        }
        components.port = port
        components.path = path
        guard let url = components.url else { throw .invalidEndpoint("cannot build \(scheme)://\(host)\(path)") }
        return url
    }
}
