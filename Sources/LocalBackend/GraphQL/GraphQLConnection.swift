import Foundation
import GraphQL
import HummingbirdWebSocket
import Logging
import NIOCore

/// One `/graphql` WebSocket speaking graphql-transport-ws (protocols.md §2): reads its messages in order and answers
/// them; operations run on GraphQLSwift against the legacy schema (``LegacyGraphQLSchema``).
///
/// | client sends | server does |
/// |---|---|
/// | (nothing yet), having not offered `graphql-transport-ws` | close 4406 `Subprotocol not acceptable` right after the upgrade |
/// | no `connection_init` within ``LocalBackendConfiguration/graphQLInitTimeout`` | close 4408 `Connection initialisation timeout` |
/// | `connection_init` with a valid HS256 JWT in `payload.Authorization` | `connection_ack` |
/// | `connection_init` refused (no/invalid/expired token, `expireTokens` fault) | close 4403 `Forbidden` |
/// | a second `connection_init` | close 4429 `Too many initialisation requests` |
/// | `subscribe` before the ack | close 4401 `Unauthorized` |
/// | `subscribe` with the id of an active operation | close 4409 `Subscriber for <id> already exists` |
/// | `subscribe`, invalid document/variables/arguments, or forbidden arguments | `error` with `[GraphQLError]` |
/// | `subscribe`, valid | `next` per event (through the outbox as data frames; ``LegacyResponseMapper``), `complete` if the source ends |
/// | `complete` | stops that operation (nothing is sent back) |
/// | `ping` | `pong` at once, echoing the payload |
/// | malformed JSON, unknown type, missing or mistyped fields, oversized message | close 4400 |
///
/// Messages are handled one at a time: `subscribe` has attached the operation to the bus before the next message
/// is read (so a `ping` sent after `subscribe` is answered only once the subscription receives events).
actor GraphQLConnection {
    /// One running (or starting) operation; `token` tells it from a later operation reusing its id.
    private struct Operation {
        let token: Int
        var task: Task<Void, Never>?
    }

    private let outbox: WebSocketOutbox
    private let services: BackendServices
    private let schema: GraphQLSchema
    private let logger: Logger
    private var initReceived = false
    private var userID: String?
    private var closing = false
    private var operations: [String: Operation] = [:]
    private var nextToken = 0

    private init(outbox: WebSocketOutbox, services: BackendServices, schema: GraphQLSchema, logger: Logger) {
        self.outbox = outbox
        self.services = services
        self.schema = schema
        self.logger = logger
    }

    /// Runs an accepted connection until it ends: the writer, the init timer and the reader (this task); then stops
    /// every operation. `subprotocolAccepted` is `false` when the client did not offer `graphql-transport-ws`: the
    /// socket is then closed with 4406 `Subprotocol not acceptable` straight after the upgrade, as the graphql-ws
    /// reference server does (a client speaking another protocol would not understand any message). The reader still
    /// runs, so the client's close frame completes the handshake.
    static func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, schema: GraphQLSchema,
        subprotocolAccepted: Bool, services: BackendServices
    ) async {
        let outbox = WebSocketOutbox()
        let id = services.connections.register(kind: .graphQL) { code, reason in outbox.close(code: code, reason: reason) }
        var logger = services.logger
        logger[metadataKey: "graphql.connection"] = "\(id)"
        let connection = GraphQLConnection(
            outbox: outbox, services: services, schema: schema, logger: logger)
        logger.info("GraphQL connection opened")
        if !subprotocolAccepted { await connection.close(4406, "Subprotocol not acceptable") }
        let initTimeout = services.configuration.graphQLInitTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [logger] in await outbox.run(writer: outbound, faults: services.faults, channel: channel, logger: logger) }
            group.addTask { await connection.closeUnlessAcknowledged(after: initTimeout) }
            do {
                try await InboundMessageReader.read(inbound, maxBytes: LocalBackendServer.maxMessageBytes) { await connection.handle($0) }
            } catch {
                logger.debug("inbound ended with an error", metadata: ["error": "\(error)"])
            }
            await connection.stopAll()
            outbox.finish()
            group.cancelAll()
        }
        services.connections.unregister(id)
        logger.info("GraphQL connection closed")
    }

    // MARK: Connection

    private func closeUnlessAcknowledged(after timeout: Duration) async {
        do { try await Task.sleep(for: timeout) } catch { return }
        // As graphql-ws does: what must arrive in time is the `connection_init` itself (its verdict may follow).
        guard !initReceived, !closing else { return }
        logger.info("no connection_init in time; closing with 4408")
        close(4408, "Connection initialisation timeout")
    }

    /// Queues a close after what is already queued, and stops every operation; later messages are ignored.
    private func close(_ code: UInt16, _ reason: String) {
        guard !closing else { return }
        closing = true
        logger.debug("closing", metadata: ["code": "\(code)", "reason": "\(reason)"])
        stopAll()
        outbox.close(code: code, reason: reason)
    }

    private func stopAll() {
        for operation in operations.values { operation.task?.cancel() }
        operations.removeAll()
    }

    // MARK: Messages

    private func handle(_ message: InboundMessageReader.Message) async {
        guard !closing else { return }
        switch message {
        case .oversized(let size):
            logger.warning("oversized message", metadata: ["bytes": "\(size)"])
            close(4400, "Message too large")
        case .text(let text):
            await handle(text)
        }
    }

    private func handle(_ text: String) async {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let message = parsed as? [String: Any],
            let type = message["type"] as? String
        else {
            return close(4400, "Invalid message received")
        }
        switch type {
        case "connection_init":
            await connectionInit(message)
        case "ping":
            guard let payload = Self.optionalPayload(message) else { return close(4400, "Invalid message received") }
            outbox.send(GraphQLServerMessage.pong(payload: payload.flatMap(Self.jsonText)))
        case "pong":
            guard Self.optionalPayload(message) != nil else { return close(4400, "Invalid message received") }
        case "subscribe":
            await subscribe(message)
        case "complete":
            guard let id = message["id"] as? String, !id.isEmpty else { return close(4400, "Invalid message received") }
            if let operation = operations.removeValue(forKey: id) {
                operation.task?.cancel()
                logger.debug("operation completed by the client", metadata: ["id": "\(id)"])
            }
        case "connection_ack", "next", "error":
            close(4400, "Unexpected message of type \(type) received")
        default:
            close(4400, "Invalid message received")
        }
    }

    /// The `payload` member: `.some(nil)` when absent or null, `.some(object)` for an object, `nil` (invalid) for
    /// anything else.
    private static func optionalPayload(_ message: [String: Any]) -> [String: Any]?? {
        switch message["payload"] {
        case .none, is NSNull: .some(nil)
        case let object as [String: Any]: .some(object)
        default: nil
        }
    }

    private static func jsonText(_ object: [String: Any]) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }

    private func connectionInit(_ message: [String: Any]) async {
        guard !initReceived else { return close(4429, "Too many initialisation requests") }
        initReceived = true
        guard let payload = Self.optionalPayload(message) else { return close(4400, "Invalid message received") }
        let token = payload?.first { $0.key.lowercased() == "authorization" }?.value as? String
        let outcome: Result<String, AuthFailure>
        if let token, let jwt = services.jwt {
            outcome = await jwt.verify(token)
        } else {
            outcome = .failure(AuthFailure(services.jwt == nil ? "No JWT secret is configured" : "Missing Authorization"))
        }
        guard !closing else { return }
        switch outcome {
        case .success(let user):
            userID = user
            logger.info("GraphQL connection acknowledged", metadata: ["user": "\(user)"])
            outbox.send(GraphQLServerMessage.connectionAck)
        case .failure(let failure):
            logger.info("GraphQL connection_init refused", metadata: ["reason": "\(failure.message)"])
            close(4403, "Forbidden")
        }
    }

    // MARK: Operations

    private func subscribe(_ message: [String: Any]) async {
        guard let userID else { return close(4401, "Unauthorized") }
        guard let id = message["id"] as? String, !id.isEmpty, let payload = message["payload"] as? [String: Any],
            let query = payload["query"] as? String
        else {
            return close(4400, "Invalid message received")
        }
        let operationName: String?
        switch payload["operationName"] {
        case .none, is NSNull: operationName = nil
        case let name as String: operationName = name
        default: return close(4400, "Invalid message received")
        }
        let variables: [String: Map]
        switch payload["variables"] {
        case .none, is NSNull:
            variables = [:]
        case let object as [String: Any]:
            guard let data = try? JSONSerialization.data(withJSONObject: object),
                let decoded = try? JSONDecoder().decode([String: Map].self, from: data)
            else { return close(4400, "Invalid message received") }
            variables = decoded
        default:
            return close(4400, "Invalid message received")
        }
        guard operations[id] == nil else { return close(4409, "Subscriber for \(id) already exists") }
        let token = nextToken
        nextToken += 1
        operations[id] = Operation(token: token)
        let context = LegacyGraphQLContext(userID: userID, bus: services.bus)
        let document = try? parse(source: query)
        do {
            if let document, Self.operationType(in: document, named: operationName) == .subscription {
                // GraphQLSwift accepts or refuses the operation (validation, arguments, the resolver's permission
                // check); the resolver records the source, and the events are mapped here (LegacyResponseMapper).
                switch try await graphqlSubscribe(
                    schema: schema, request: query, context: context, variableValues: variables, operationName: operationName)
                {
                case .failure(let errors):
                    fail(id, token, errors.errors)
                case .success:
                    guard operations[id]?.token == token else { return }
                    guard let resolution = context.source.recorded else {
                        return fail(id, token, [GraphQLError(message: "Internal error: the subscription has no source")])
                    }
                    // Opened here, before the next message is read: the operation is attached to the bus from now on.
                    let events = context.events(for: resolution.topic, argument: resolution.argument)
                    let mapper = LegacyResponseMapper(
                        id: id, schema: schema, document: document, context: context, variables: variables,
                        operationName: operationName)
                    logger.debug(
                        "subscribed",
                        metadata: ["id": "\(id)", "operation": "\(operationName ?? "")", "direct": "\(mapper.plan != nil)"])
                    operations[id]?.task = Task { [weak self] in
                        do {
                            for await source in events {
                                let message = try await mapper.message(for: source)
                                await self?.deliver(id, token, message)
                            }
                            await self?.finish(id, token)
                        } catch {
                            await self?.fail(id, token, [GraphQLError(message: "Subscription source failed: \(error)")])
                        }
                    }
                }
            } else {
                let result = try await graphql(
                    schema: schema, request: query, context: context, variableValues: variables, operationName: operationName)
                guard result.data != nil else { return fail(id, token, result.errors) }
                deliver(id, token, result)
                finish(id, token)
            }
        } catch let error as GraphQLError {
            fail(id, token, [error])
        } catch let errors as GraphQLErrors {
            fail(id, token, errors.errors)
        } catch {
            fail(id, token, [GraphQLError(message: "\(error)")])
        }
    }

    /// The type of the operation `document` would run (`nil` when it has no such operation: the executor then reports
    /// why).
    private static func operationType(in document: Document, named name: String?) -> OperationType? {
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        let operation = name.map { name in operations.first { $0.name?.value == name } } ?? operations.first
        return operation?.operation
    }

    private func deliver(_ id: String, _ token: Int, _ result: GraphQLResult) {
        deliver(id, token, GraphQLServerMessage.next(id: id, result))
    }

    private func deliver(_ id: String, _ token: Int, _ message: String) {
        guard !closing, operations[id]?.token == token else { return }
        outbox.send(message, isData: true)
    }

    private func finish(_ id: String, _ token: Int) {
        guard !closing, operations[id]?.token == token else { return }
        operations[id] = nil
        outbox.send(GraphQLServerMessage.complete(id: id))
    }

    private func fail(_ id: String, _ token: Int, _ errors: [GraphQLError]) {
        guard !closing, operations[id]?.token == token else { return }
        operations[id] = nil
        logger.debug("operation failed", metadata: ["id": "\(id)", "errors": "\(errors.map(\.message))"])
        outbox.send(GraphQLServerMessage.error(id: id, errors.isEmpty ? [GraphQLError(message: "Unknown error")] : errors))
    }
}
