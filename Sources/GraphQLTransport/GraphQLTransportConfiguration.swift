import Foundation
import SubscriberCore

/// Everything that tunes a ``GraphQLTransport``.
public struct GraphQLTransportConfiguration: Sendable {
    /// The `ws://` (loopback only) or `wss://` URL of the GraphQL WebSocket endpoint.
    public let url: URL
    /// Delays between reconnect attempts. Default: fixed 10 s, unlimited.
    public var reconnectPolicy: ReconnectPolicy = .default
    /// How long to wait for `connection_ack`; on expiry the client closes with 4504 and retries. Default 15 s.
    public var ackTimeout: Duration = .seconds(15)
    /// Send `ping` this often once acknowledged; `nil` (the default) sends none.
    public var pingInterval: Duration?
    /// How long a `ping` may go unanswered before the connection counts as dead. Default 10 s.
    public var pongTimeout: Duration = .seconds(10)
    /// How long to keep the socket after the last subscription ends. Default 0: close at once.
    public var idleCloseDelay: Duration = .zero
    /// Events buffered per subscription for a slow consumer before the oldest are dropped (and counted). Default 1024.
    public var subscriptionBufferLimit = 1024
    /// Builds the `connection_init` payload (a JSON object text) from fresh credentials, for every attempt.
    /// Default: `{"Authorization":"<token>"}` for tokens, `{"x-api-key":"<key>"}` for API keys.
    public var connectionPayload: @Sendable (AuthCredentials) -> String = GraphQLTransportConfiguration.defaultConnectionPayload

    /// Creates a configuration; throws `RealtimeError/invalidEndpoint(_:)` for a URL that is not `wss://`
    /// (or `ws://` on a loopback host).
    public init(url: URL) throws(RealtimeError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss" else {
            throw .invalidEndpoint("\(url.absoluteString): expected wss:// (or ws:// on loopback)")
        }
        guard let host = url.host, !host.isEmpty else { throw .invalidEndpoint("\(url.absoluteString) has no host") }
        if scheme == "ws" && !LoopbackHost.contains(host) {
            throw .invalidEndpoint("\(url.absoluteString): ws:// is allowed only for loopback hosts; use wss://")
        }
        self.url = url
    }

    /// Creates a configuration from URL text.
    public init(_ text: String) throws(RealtimeError) {
        guard let url = URL(string: text.trimmingCharacters(in: .whitespaces)) else { throw .invalidEndpoint("\"\(text)\" is not a URL") }
        try self.init(url: url)
    }

    /// The default `connection_init` payload.
    public static func defaultConnectionPayload(_ credentials: AuthCredentials) -> String {
        switch credentials {
        case .bearerToken(let token), .lambdaToken(let token):
            JSONString.sortedStringObject(["Authorization": token])
        case .apiKey(let key):
            JSONString.sortedStringObject(["x-api-key": key])
        case .iam:
            "{}"
        }
    }
}
