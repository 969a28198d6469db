/// Where a running ``LocalBackendServer`` listens.
public struct LocalBackendEndpoints: Sendable, Codable, Equatable {
    /// `http://HOST:PORT/event`: AppSync Events HTTP publish (and the endpoint clients are configured with).
    public var http: String
    /// `ws://HOST:PORT/event/realtime`: the AppSync Events WebSocket.
    public var realtime: String
    /// `ws://HOST:PORT/graphql`: the legacy GraphQL WebSocket.
    public var graphql: String
    /// `http://HOST:PORT/vortex` when ``LocalBackendConfiguration/admin`` is on, else `nil`.
    public var admin: String?

    /// Creates endpoints.
    public init(http: String, realtime: String, graphql: String, admin: String?) {
        self.http = http
        self.realtime = realtime
        self.graphql = graphql
        self.admin = admin
    }

    /// The endpoints of a server at `hostAndPort` (`HOST:PORT`, IPv6 in brackets).
    init(hostAndPort: String, admin: Bool) {
        self.init(
            http: "http://\(hostAndPort)/event", realtime: "ws://\(hostAndPort)/event/realtime", graphql: "ws://\(hostAndPort)/graphql",
            admin: admin ? "http://\(hostAndPort)/vortex" : nil)
    }
}
