import HTTPTypes
import Logging
import NIOCore

/// The WebSocket endpoints of the server, by path: `/event/realtime` (AppSync Events) and `/graphql` (the legacy
/// GraphQL endpoint, registered by ``GraphQLRoute``). One HTTP port serves them all.
struct WebSocketRouteTable: Sendable {
    /// Decides one upgrade request. Runs before the 101 response, so it can refuse with any status.
    typealias Route = @Sendable (HTTPRequest, any Channel, Logger) async -> WebSocketUpgradeDecision

    private var routes: [String: Route] = [:]

    /// Registers (or replaces) the route for `path`, for example `/graphql`.
    mutating func register(_ path: String, _ route: @escaping Route) {
        routes[path] = route
    }

    /// The route for a request path (query ignored, trailing `/` tolerated).
    func route(for requestPath: String) -> Route? {
        var path = String(requestPath.prefix { $0 != "?" })
        if path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return routes[path]
    }

    /// The registered paths.
    var paths: [String] { routes.keys.sorted() }
}
