import AppSyncEventsWire
import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore

/// `GET /event/realtime`: the AppSync Events WebSocket upgrade.
///
/// The connect-time authorization comes from the `header-<base64url JSON>` subprotocol, or else from plain request
/// headers (as the official Swift and Kotlin SDKs send it). When `aws-appsync-event-ws` is offered it is echoed in
/// the upgrade response (URLSession drops a connection whose offered subprotocol is not selected).
///
/// Bad connect authorization is answered the way the service does: the upgrade succeeds, then the server sends
/// `connection_error` with `UnauthorizedException` (in answer to `connection_init`) and closes with 1000. (`AppSyncEventsTransport` reads that as
/// an auth rejection: it asks its ``AuthSession`` for fresh credentials once, then stops with `sessionExpired`.)
enum AppSyncRealtimeRoute {
    /// The path.
    static let path = "/event/realtime"
    /// The protocol's subprotocol name.
    static let subprotocol = AppSyncSubprotocol.name

    /// Decides the upgrade of one request.
    static func decide(request: HTTPRequest, channel: any Channel, services: BackendServices) async -> WebSocketUpgradeDecision {
        let offered = AuthObject.offeredSubprotocols(request.headerFields)
        var headers = HTTPFields()
        if offered.contains(subprotocol) { headers[.secWebSocketProtocol] = subprotocol }
        let outcome: Result<CallerIdentity, AuthFailure>
        switch AuthObject.fromSubprotocols(offered) ?? .success(AuthObject(request: request)) {
        case .failure(let failure):
            outcome = .failure(failure)
        case .success(let auth):
            outcome = await services.authenticator.authenticate(auth, body: "{}")
        }
        switch outcome {
        case .success(let identity):
            return .upgrade(headers) { inbound, outbound, _ in
                await AppSyncConnection.serve(
                    inbound: inbound, outbound: outbound, channel: channel, identity: identity, services: services)
            }
        case .failure(let failure):
            services.logger.info("AppSync connection refused", metadata: ["reason": "\(failure.message)"])
            let logger = services.logger
            return .upgrade(headers) { inbound, outbound, _ in
                await AppSyncConnection.reject(inbound: inbound, outbound: outbound, channel: channel, failure: failure, logger: logger)
            }
        }
    }
}
