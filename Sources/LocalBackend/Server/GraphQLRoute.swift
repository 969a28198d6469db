import GraphQL
import HTTPTypes
import Logging
import NIOCore
import SubscriberCore

/// The legacy GraphQL endpoint, `GET /graphql` (graphql-transport-ws), on the same port as AppSync Events.
///
/// ``LocalBackendServer/start()`` calls ``register(on:services:)`` once; it registers ``decideUpgrade(request:channel:
/// services:logger:)`` for ``path`` in the server's ``WebSocketRouteTable``. Each upgraded socket runs a
/// ``GraphQLConnection`` (the protocol, its close codes and the operations), executing ``LegacySchemaSDL`` — the
/// text of `docs/legacy-schema.graphql` — with GraphQLSwift (``LegacyGraphQLSchema``).
///
/// - Already handled before `decideUpgrade` runs: the `refuseConnections` fault (503), unknown paths (404).
/// - What the connection uses from `services`:
///   - `services.bus.graphQLDomainEvents()` (the domain events published on GraphQL) — one stream per subscription, the
///     subscription's source event stream;
///   - `services.bus.directory` and `services.bus.recipients(of:)` — the same permission filtering the AppSync side
///     uses (organization, device groups, admins), applied per event (``LegacyGraphQLContext``);
///   - `services.jwt` — HS256 verification of the `connection_init` token (`sub` = user id, `exp` and the
///     `expireTokens` fault enforced);
///   - `services.connections.register(kind: .graphQL)` — every socket, so the `closeAll` fault and
///     ``LocalBackendServer/stop()`` close it too;
///   - ``WebSocketOutbox`` — `next` messages are queued with `isData: true`, so `delayFrames` and `dropFrames` apply;
///     ``InboundMessageReader`` reassembles messages with the server's size limit.
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

    /// The executable legacy schema, built once (its resolvers take the connection from the execution context).
    static let schema: Result<GraphQLSchema, any Error> = Result { try LegacyGraphQLSchema.make() }

    /// Decides one upgrade of `GET /graphql`: always upgrades (echoing `graphql-transport-ws` when offered) and runs
    /// a ``GraphQLConnection``; a client that did not offer the subprotocol is closed with 4406 straight after the upgrade.
    static func decideUpgrade(
        request: HTTPRequest, channel: any Channel, services: BackendServices, logger: Logger
    ) async
        -> WebSocketUpgradeDecision
    {
        let schema: GraphQLSchema
        switch Self.schema {
        case .success(let built):
            schema = built
        case .failure(let error):
            logger.error("GraphQL upgrade refused: the legacy schema does not build", metadata: ["error": "\(error)"])
            let entry = AppSyncErrorEntry(errorType: "InternalFailure", message: "The legacy GraphQL schema does not build")
            return .refuse(.internalServerError, body: entry.httpBody)
        }
        let accepted = AuthObject.offeredSubprotocols(request.headerFields).contains(subprotocol)
        var headers = HTTPFields()
        if accepted { headers[.secWebSocketProtocol] = subprotocol }
        return .upgrade(headers) { inbound, outbound, _ in
            await GraphQLConnection.serve(
                inbound: inbound, outbound: outbound, channel: channel, schema: schema, subprotocolAccepted: accepted, services: services)
        }
    }
}
