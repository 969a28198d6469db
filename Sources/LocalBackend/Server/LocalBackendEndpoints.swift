/// Where a running ``LocalBackendServer`` listens.
public struct LocalBackendEndpoints: Sendable, Codable, Equatable {
    /// `http://HOST:PORT/event`: AppSync Events HTTP publish (and the endpoint clients are configured with); `https`
    /// with ``LocalBackendConfiguration/tls``, as are the others (`wss` for the WebSockets).
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

    /// The endpoints of a server at `hostAndPort` (`HOST:PORT`, IPv6 in brackets); `secure`: behind TLS.
    init(hostAndPort: String, admin: Bool, secure: Bool = false) {
        let (http, ws) = secure ? ("https", "wss") : ("http", "ws")
        self.init(
            http: "\(http)://\(hostAndPort)/event", realtime: "\(ws)://\(hostAndPort)/event/realtime",
            graphql: "\(ws)://\(hostAndPort)/graphql", admin: admin ? "\(http)://\(hostAndPort)/vortex" : nil)
    }
}
