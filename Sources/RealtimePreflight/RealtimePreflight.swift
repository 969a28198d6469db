import BackendNotifier
import Composition
import Foundation
import Logging
import SubscriberCore

/// Checks, before a rollback or a flip, that a server can serve every upstream the notifier will ask of it:
///
/// - **GraphQL:** connects with the configured `connection_init` payload (``RealtimeConfiguration/graphQLConnectionPayload``
///   or the default) and reports `connection_ack` or the refusal with its close code; then reads the server's schema
///   by introspection and checks every document the notifier would send — the configured
///   ``RealtimeConfiguration/graphQLOperations``, or the default documents — naming each missing operation, argument
///   or field, and each variable whose declared type does not fit the argument or cannot hold what the notifier
///   sends;
/// - **AppSync Events:** subscribes the five channels of the user and confirms each one subscribes.
///
/// `vortex-realtime preflight` runs it and exits 0 only when ``PreflightReport/passed``.
public struct RealtimePreflight: Sendable {
    /// The configuration (endpoints, auth mode, GraphQL operations).
    public let configuration: RealtimeConfiguration
    /// The credentials.
    public let auth: any AuthSession
    /// The signed-in user whose subscriptions are checked.
    public let userId: String
    /// The user's organization.
    public let organizationId: String?
    /// The WebSocket implementation.
    public let connector: any WebSocketConnector
    /// Runs the timeout.
    public let clock: any Clock<Duration>
    /// The logger (never receives credentials).
    public let logger: Logger
    /// How long each check may take. Default 10 s.
    public var timeout: Duration = .seconds(10)

    /// Creates a preflight.
    public init(
        configuration: RealtimeConfiguration, auth: any AuthSession, userId: String, organizationId: String?,
        connector: any WebSocketConnector = TransportFactory.platformConnector, clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "vortex.preflight")
    ) {
        self.configuration = configuration
        self.auth = auth
        self.userId = userId
        self.organizationId = organizationId
        self.connector = connector
        self.clock = clock
        self.logger = logger
    }

    /// Runs the checks for `kind`.
    public func run(_ kind: RealtimeConfiguration.TransportKind) async -> PreflightReport {
        switch kind {
        case .graphql: await checkGraphQL()
        case .appsync: await checkAppSync()
        }
    }

    // MARK: GraphQL

    /// The documents the notifier would send, per upstream.
    public func graphQLDocuments() -> [(NotifierUpstream, GraphQLOperation)] {
        let configured = configuration.resolvedGraphQLOperations
        return NotifierUpstream.allCases.map { ($0, configured[$0] ?? LegacyGraphQLDocuments.operation(for: $0)) }
    }

    /// The variables the notifier supplies to a document that declares them (`GraphQLOperation/withIdentity`).
    public var suppliedVariables: Set<String> {
        organizationId == nil ? ["userId"] : ["userId", "orgId", "organizationId"]
    }

    private func checkGraphQL() async -> PreflightReport {
        let acknowledged = Locked<Bool?>(nil)
        let schema: IntrospectedSchema
        do {
            schema = try await withTimeout("connection_ack and the schema") { try await introspect(acknowledged: acknowledged) }
        } catch {
            // The connection_init check is reported apart: a refused payload is a configuration fault of its own.
            guard acknowledged.withLock({ $0 }) == true else {
                let problem = acknowledged.withLock({ $0 }) == false ? "\(error)" : "no connection_ack: \(error)"
                return PreflightReport(transport: "graphql", checks: [.init(name: "connection_init", problems: [problem])])
            }
            return PreflightReport(
                transport: "graphql",
                checks: [.init(name: "connection_init", problems: []), .init(name: "introspection", problems: ["\(error)"])])
        }
        var checks = [PreflightReport.Check(name: "connection_init", problems: []), .init(name: "introspection", problems: [])]
        for (upstream, operation) in graphQLDocuments() {
            checks.append(.init(name: upstream.rawValue, problems: schema.problems(of: operation.query, supplied: suppliedVariables)))
        }
        return PreflightReport(transport: "graphql", checks: checks)
    }

    /// Connects with the configured `connection_init` payload and reads the schema; `acknowledged` becomes `true` on
    /// `connection_ack`, `false` when the server refused the payload (the error then names the close code).
    private func introspect(acknowledged: Locked<Bool?>) async throws -> IntrospectedSchema {
        let request = try factory.graphQLWebSocketRequest()
        let credentials = try await auth.credentials(forceRefresh: false)
        let payload = try configuration.connectionPayloadBuilder(logger: logger)(credentials)
        // The scope closes the connection (1000) when reading the schema returns or throws.
        let result: WebSocketScopeResult<IntrospectedSchema?>
        do {
            result = try await connector.withConnection(request) { connection in
                try await Self.readSchema(from: connection, payload: payload, acknowledged: acknowledged)
            }
        } catch let error as WebSocketSeamError {
            acknowledged.withLock { $0 = false }
            throw PreflightFailure("the connection failed before connection_init: \(error)")
        }
        if let schema = result.value { return schema }
        let close = result.close
        if acknowledged.withLock({ $0 }) == true {
            throw PreflightFailure("the server closed the connection before answering the introspection (close \(close.effectiveCode))")
        }
        acknowledged.withLock { $0 = false }
        let reason = close.reason.isEmpty ? "" : " \(close.reason)"
        throw PreflightFailure(
            "refused: the server closed the connection with \(close.effectiveCode)\(reason) instead of connection_ack (check graphQLConnectionPayload and the credentials)"
        )
    }

    /// The schema, or `nil` when the connection ended first (the caller reads the close code).
    private static func readSchema(
        from connection: any WebSocketConnection, payload: String, acknowledged: Locked<Bool?>
    ) async throws -> IntrospectedSchema? {
        try await connection.send(.text(#"{"type":"connection_init","payload":\#(payload)}"#))
        while true {
            switch try await connection.receive() {
            case nil:
                return nil
            case let message?:
                let object = Self.object(message)
                switch object?["type"] as? String {
                case "connection_ack":
                    acknowledged.withLock { $0 = true }
                    let query = JSONString.sortedStringObject(["query": IntrospectedSchema.query])
                    try await connection.send(.text(#"{"type":"subscribe","id":"preflight","payload":\#(query)}"#))
                case "connection_error":
                    // subscriptions-transport-ws servers refuse this way instead of closing.
                    acknowledged.withLock { $0 = false }
                    throw PreflightFailure("refused: connection_error \(Self.text(object?["payload"]))")
                case "ping":
                    try await connection.send(.text(#"{"type":"pong"}"#))
                case "next":
                    let result = object?["payload"] as? [String: Any]
                    if let data = result?["data"] as? [String: Any] { return try IntrospectedSchema(data: data) }
                    throw PreflightFailure("introspection failed: \(Self.text(result?["errors"]))")
                case "error":
                    throw PreflightFailure("introspection refused: \(Self.text(object?["payload"]))")
                default:
                    continue
                }
            }
        }
    }

    private static func object(_ message: WebSocketMessage) -> [String: Any]? {
        let data: Data
        switch message {
        case .text(let text): data = Data(text.utf8)
        case .binary(let bytes): data = bytes
        }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    private static func text(_ value: Any?) -> String {
        guard let value, JSONSerialization.isValidJSONObject(value), let data = try? JSONSerialization.data(withJSONObject: value) else {
            return "no details"
        }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: AppSync Events

    private func checkAppSync() async -> PreflightReport {
        let transport: any RealtimeTransport
        do {
            transport = try factory.make(.appsync)
        } catch {
            return PreflightReport(transport: "appsync", checks: [.init(name: "configuration", problems: ["\(error)"])])
        }
        let namespace = configuration.notifierConfiguration.channelNamespace
        let checks = await withTaskGroup(of: PreflightReport.Check.self) { group in
            for upstream in NotifierUpstream.allCases {
                guard
                    let request = upstream.request(
                        dialect: .appSyncChannels, userId: userId, organizationId: organizationId, namespace: namespace),
                    case .channel(let channel) = request.topic
                else { continue }
                group.addTask {
                    do {
                        try await withTimeout("\(channel) to subscribe") {
                            for try await event in await transport.subscribe(request) where event == .live { return }
                            throw PreflightFailure("\(channel): the subscription ended before it was live")
                        }
                        return .init(name: upstream.rawValue, problems: [])
                    } catch {
                        return .init(name: upstream.rawValue, problems: ["\(channel): \(error)"])
                    }
                }
            }
            var checks: [String: PreflightReport.Check] = [:]
            for await check in group { checks[check.name] = check }
            return NotifierUpstream.allCases.compactMap { checks[$0.rawValue] }
        }
        await transport.disconnect()
        return PreflightReport(transport: "appsync", checks: checks)
    }

    // MARK: Support

    /// Composition's factory: the one place that knows the transports.
    private var factory: TransportFactory {
        TransportFactory(configuration: configuration, auth: auth, connector: connector, clock: clock, logger: logger)
    }

    private func withTimeout<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let clock = self.clock
        let timeout = self.timeout
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await clock.sleep(for: timeout, tolerance: nil)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw PreflightFailure("timed out after \(timeout) waiting for \(what)")
            }
            return value
        }
    }
}

/// Why a preflight check failed.
struct PreflightFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What ``RealtimePreflight`` found.
public struct PreflightReport: Sendable, Equatable, Codable {
    /// One check: an upstream's document or channel, or a step such as introspection.
    public struct Check: Sendable, Equatable, Codable {
        /// What was checked (`introspection`, `device`, `organization`, `archive`, `role`, `revoke`).
        public var name: String
        /// Each problem found, naming the missing operation, argument, field or the refusal; empty when it passed.
        public var problems: [String]
        /// Whether it passed.
        public var passed: Bool { problems.isEmpty }
        /// Creates a check.
        public init(name: String, problems: [String]) {
            self.name = name
            self.problems = problems
        }
    }

    /// `graphql` or `appsync`.
    public var transport: String
    /// Every check, in order.
    public var checks: [Check]
    /// Whether everything checked out.
    public var passed: Bool { !checks.isEmpty && checks.allSatisfy(\.passed) }

    /// Creates a report.
    public init(transport: String, checks: [Check]) {
        self.transport = transport
        self.checks = checks
    }
}
