import Foundation
import SubscriberCore

/// Everything that tunes a ``GraphQLTransport``.
public struct GraphQLTransportConfiguration: Sendable {
    /// The `ws://` (loopback only) or `wss://` URL of the GraphQL WebSocket endpoint.
    public let url: URL
    /// What both transports' links share: reconnect policy, acknowledgement timeout, liveness (shared with the AppSync
    /// transport; where the server does not answer WebSocket pings, the protocol's `ping` takes over with the same quiet
    /// period and pong timeout, and any frame answers it; `quietPeriod` `nil` sends no pings of either kind), gap
    /// safety margin and subscription buffer limit.
    public var link = LinkSettings()
    /// graphql-transport-ws has no subscribe acknowledgement: a subscription counts as live on its first `next`, or
    /// once this window has passed after `subscribe` without an `error`. Default 2 s.
    public var liveConfirmationWindow: Duration = .seconds(2)
    /// How long to keep the socket after the last subscription ends. Default 0: close at once.
    public var idleCloseDelay: Duration = .zero
    /// Builds the `connection_init` payload (a JSON object text) for every connection attempt, from the credentials
    /// the ``AuthSession`` gave for that attempt (`forceRefresh: true` after a 4403). Default:
    /// `{"Authorization":"<token>"}` for tokens, `{"x-api-key":"<key>"}` for API keys.
    ///
    /// graphql-transport-ws carries credentials only here: the server sees a token once, at connect, and an open link
    /// outlives it. Revoking a token therefore takes the server closing the link (4401 or 4403); the client asks for
    /// credentials again at its next connect.
    public var connectionPayload: @Sendable (AuthCredentials) -> String = GraphQLTransportConfiguration.defaultConnectionPayload

    /// Creates a configuration; throws `RealtimeError/invalidEndpoint(_:)` for a URL that is not `wss://`
    /// (or `ws://` on a loopback host).
    public init(url: URL) throws(RealtimeError) {
        _ = try url.checkTransportEndpoint(secure: "wss", insecure: "ws")
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
