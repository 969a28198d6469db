import GraphQL
import OrderedCollections
import SubscriberCore
import VortexVocabulary

/// The executable legacy schema: ``LegacySchemaSDL/text`` built by GraphQLSwift's `buildSchema(source:)`, then given
/// its resolvers during setup (an SDL-built schema has none):
///
/// - each `Subscription` field gets a `subscribe` resolver that scopes it by the connection's user (the optional
///   argument, when given, is checked against that user: ``LegacyGraphQLContext``) and records the topic and argument
///   in the context's ``LegacySourceSlot``: the connection then opens that slice of `EventBus.graphQLDomainEvents()`
///   (``LegacyGraphQLContext/events(for:argument:)``) and maps each ``LegacyEventSource`` to a response itself
///   (``LegacyResponseMapper``), so the stream the resolver hands GraphQLSwift is empty; and a `resolve` that hands the
///   event on as the field's value;
/// - `Query.health` answers `"ok"`;
/// - `scalar JSON` serializes a ``JSONValue`` (the AI `options`) into the identical `Map`, and parses input values
///   and literals untouched.
///
/// Every output field is then resolved by GraphQLSwift's default resolver, by name, from the event's fields.
enum LegacyGraphQLSchema {
    /// Why the schema could not be built (never expected: a test builds it from the same SDL).
    struct BuildFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Builds the schema with its resolvers.
    static func make() throws -> GraphQLSchema {
        let schema = try buildSchema(source: LegacySchemaSDL.text)
        guard let query = schema.queryType, let subscription = schema.subscriptionType else {
            throw BuildFailure(description: "the legacy SDL must define Query and Subscription")
        }
        guard let json = schema.getType(name: "JSON") as? GraphQLScalarType else {
            throw BuildFailure(description: "the legacy SDL must define scalar JSON")
        }
        json.serialize = { value in
            if let value = value as? JSONValue { return value.graphQLMap }
            if let value = value as? Map { return value }
            return try map(from: value)
        }

        let queryFields = try query.fields()
        queryFields["health"]?.resolve = { _, _, _, _ in "ok" }
        query.fields = { queryFields }

        let subscriptionFields = try subscription.fields()
        for (name, field) in subscriptionFields {
            guard let topic = LegacyTopic(fieldName: name) else {
                throw BuildFailure(description: "no event source for Subscription.\(name)")
            }
            field.subscribe = { _, arguments, context, info in
                guard let context = context as? LegacyGraphQLContext else {
                    throw GraphQLError(message: "Internal error: no connection context")
                }
                // The documents give no arguments: the legacy server scopes a subscription by the connection's user. The
                // optional argument (a local extension) must then name that user or their organization.
                let argument: String
                if case .string(let given) = arguments[topic.argumentName] {
                    argument = given
                } else if let scope = context.defaultArgument(for: topic) {
                    argument = scope
                } else {
                    throw GraphQLError(message: "Forbidden", nodes: info.fieldASTs, path: info.path)
                }
                guard context.allows(topic, argument: argument) else {
                    throw GraphQLError(message: "Forbidden", nodes: info.fieldASTs, path: info.path)
                }
                // The connection opens the source and maps its events itself (LegacyResponseMapper); GraphQLSwift's
                // own response stream is left empty.
                context.source.record(topic, argument: argument)
                return AsyncStream<LegacyEventSource> { $0.finish() }
            }
            field.resolve = { source, _, _, _ in (source as? LegacyEventSource)?.fields }
        }
        subscription.fields = { subscriptionFields }

        let errors = validateSchema(schema: schema)
        guard errors.isEmpty else {
            throw BuildFailure(description: "invalid legacy schema: \(errors.map(\.message).joined(separator: "; "))")
        }
        return schema
    }
}

/// One subscription field of the legacy schema and the domain events it carries.
enum LegacyTopic: String, Sendable, CaseIterable {
    case deviceState = "subscribeDeviceState"
    case archiveState = "subscribeArchiveState"
    case organizationState = "subscribeOrganizationState"
    case roleChange = "subscribeRoleChange"
    case userTokenRevoke = "subscribeUserTokenRevoke"

    init?(fieldName: String) { self.init(rawValue: fieldName) }

    /// The field's one argument: `orgId` or `userId`.
    var argumentName: String {
        switch self {
        case .deviceState, .archiveState, .organizationState: "orgId"
        case .roleChange, .userTokenRevoke: "userId"
        }
    }

    /// The domain event kinds merged into this field's output.
    var kinds: Set<VortexEventKind> {
        switch self {
        case .deviceState: [.devicePresence, .deviceRecording, .deviceFirmware]
        case .archiveState: [.archiveState]
        case .organizationState: [.licensePhase, .plan, .aiSettings]
        case .roleChange: [.roleChanged]
        case .userTokenRevoke: [.tokenRevoked]
        }
    }

    /// The topic a domain event kind is published on.
    init(kind: VortexEventKind) {
        switch kind {
        case .devicePresence, .deviceRecording, .deviceFirmware: self = .deviceState
        case .archiveState: self = .archiveState
        case .licensePhase, .plan, .aiSettings: self = .organizationState
        case .roleChanged: self = .roleChange
        case .tokenRevoked: self = .userTokenRevoke
        }
    }
}

/// What the resolvers know about the connection an operation runs on: its user and the bus.
struct LegacyGraphQLContext: Sendable {
    /// The JWT `sub` of the connection's `connection_init`.
    let userID: String
    /// The event bus (its `directory` and `recipients(of:)` do the permission filtering).
    let bus: EventBus
    /// Where the `subscribe` resolver records the operation's topic and argument.
    let source = LegacySourceSlot()

    /// The scope of `topic` when the operation passes no argument: the user's organization (from the directory) or
    /// the user; `nil` when the user belongs to no organization.
    func defaultArgument(for topic: LegacyTopic) -> String? {
        switch topic {
        case .deviceState, .archiveState, .organizationState: bus.directory.user(id: userID)?.organizationId
        case .roleChange, .userTokenRevoke: userID
        }
    }

    /// Whether the user may subscribe to `topic` with `argument`: an organization topic only for the user's own
    /// organization (in the directory), a user topic only for the user themself.
    func allows(_ topic: LegacyTopic, argument: String) -> Bool {
        switch topic {
        case .deviceState, .archiveState, .organizationState:
            bus.directory.user(id: userID)?.organizationId == argument
        case .roleChange, .userTokenRevoke:
            argument == userID
        }
    }

    /// Whether the user receives `event` on `topic` subscribed with `argument`: the topic's kinds, the argument's
    /// organization (or user), and — the legacy backend's server-side filter — only when the user is one of the
    /// event's recipients by ``EventBus/recipients(of:)``, the rule the AppSync side fans out with.
    func delivers(_ event: DomainEvent, on topic: LegacyTopic, argument: String) -> Bool {
        guard topic.kinds.contains(event.kind) else { return false }
        switch topic {
        case .deviceState, .archiveState, .organizationState:
            guard event.orgId == argument else { return false }
        case .roleChange, .userTokenRevoke:
            guard event.userId == argument else { return false }
        }
        return bus.recipients(of: event).contains(userID)
    }

    /// The source event stream of one subscription: this user's events of `topic` from now on, as output fields.
    func events(for topic: LegacyTopic, argument: String) -> AsyncCompactMapSequence<AsyncStream<DomainEvent>, LegacyEventSource> {
        let context = self
        return bus.graphQLDomainEvents().compactMap { @Sendable event in
            guard context.delivers(event, on: topic, argument: argument) else { return nil }
            return LegacyEventSource(event)
        }
    }
}
