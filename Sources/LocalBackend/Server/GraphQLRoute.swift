import HTTPTypes
import Logging
import NIOCore
import SubscriberCore

/// The legacy GraphQL endpoint, `GET /graphql` (graphql-transport-ws), on the same port as AppSync Events.
///
/// ## The seam (for the engineer adding the graphql-transport-ws handler)
///
/// ``LocalBackendServer/start()`` calls ``register(on:services:)`` once; it registers ``decideUpgrade(request:channel:
/// services:logger:)`` for ``path`` in the server's ``WebSocketRouteTable``. Replace the body of `decideUpgrade` —
/// nothing else in the server needs to change:
///
/// - Return `.upgrade(headers, handler)` to accept: put `Sec-WebSocket-Protocol: graphql-transport-ws` in `headers`
///   when the client offered it, and in `handler` (`(inbound, outbound, context) async throws -> Void`) run the
///   protocol. Return `.refuse(status, body:)` to refuse with any HTTP status (for example 4xx before upgrading).
/// - Already handled before `decideUpgrade` runs: the `refuseConnections` fault (503), unknown paths (404).
/// - What `services` offers:
///   - `services.bus.domainEvents()` — every domain event posted to `POST /vortex/events` or
///     ``EventBus/publish(_:)``, as an `AsyncStream`; do the legacy fan-out from it;
///   - `services.bus.directory` and `services.bus.recipients(of:)` — the same permission filtering the AppSync side
///     uses (organization, device groups, admins);
///   - `services.jwt` — HS256 verification of the `connection_init` token (`sub` = user id, `exp` and the
///     `expireTokens` fault enforced);
///   - `services.connections.register(kind: .graphQL) { code, reason in … }` — register every socket so the
///     `closeAll` fault and ``LocalBackendServer/stop()`` close it too (unregister when it ends);
///   - ``WebSocketOutbox`` — an ordered writer that already applies the `delayFrames` and `dropFrames` faults (queue
///     `next` messages with `isData: true`); ``InboundMessageReader`` reassembles messages with a size limit;
///   - `services.faults.isKeepAliveStopped` — the `stopKeepAlive` fault, for the server's pings.
enum GraphQLRoute {
    /// The path.
    static let path = "/graphql"
    /// The subprotocol the endpoint will speak.
    static let subprotocol = "graphql-transport-ws"

    /// Registers the endpoint in the server's WebSocket route table.
    static func register(on routes: inout WebSocketRouteTable, services: BackendServices) {
        routes.register(path) { request, channel, logger in
            await decideUpgrade(request: request, channel: channel, services: services, logger: logger)
        }
    }

    /// Decides one upgrade of `GET /graphql`. For now: 501 Not Implemented.
    static func decideUpgrade(request: HTTPRequest, channel: any Channel, services: BackendServices, logger: Logger) async
        -> WebSocketUpgradeDecision
    {
        logger.debug("GraphQL upgrade refused: not implemented yet")
        let error = AppSyncErrorEntry(errorType: "NotImplemented", message: "The graphql-transport-ws endpoint is not implemented yet")
        return .refuse(.notImplemented, body: error.httpBody)
    }
}
