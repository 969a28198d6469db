/// What to subscribe to, in the vocabulary of one of the two protocols.
///
/// It lives in SubscriberCore (not in the transports) so the notifier can describe its subscriptions for either
/// transport without depending on them. A transport given the other protocol's topic finishes the stream with
/// ``RealtimeError/unsupported(_:)``.
public struct SubscriptionRequest: Sendable, Equatable {
    /// The protocol-specific topic.
    public var topic: Topic

    /// The protocol-specific description of a subscription.
    public enum Topic: Sendable, Equatable {
        /// An AppSync Events channel, for example `vortex-app/user/u-1/device/*`.
        case channel(String)
        /// A GraphQL subscription operation.
        case graphQL(GraphQLOperation)
    }

    /// Creates a request for a topic.
    public init(topic: Topic) { self.topic = topic }

    /// An AppSync Events channel subscription.
    public static func channel(_ name: String) -> SubscriptionRequest { .init(topic: .channel(name)) }

    /// A GraphQL subscription.
    public static func graphQL(_ operation: GraphQLOperation) -> SubscriptionRequest { .init(topic: .graphQL(operation)) }
}

/// A GraphQL operation as sent in a graphql-transport-ws `subscribe` payload.
public struct GraphQLOperation: Sendable, Equatable {
    /// The document, for example `subscription { subscribeDeviceState(orgId: "o-1") { mac online } }`.
    public var query: String
    /// The operation name, when the document holds several.
    public var operationName: String?
    /// The variables as a JSON object text (already encoded), or `nil`.
    public var variablesJSON: String?
    /// The extensions as a JSON object text, or `nil`.
    public var extensionsJSON: String?

    /// Creates an operation.
    public init(query: String, operationName: String? = nil, variablesJSON: String? = nil, extensionsJSON: String? = nil) {
        self.query = query
        self.operationName = operationName
        self.variablesJSON = variablesJSON
        self.extensionsJSON = extensionsJSON
    }
}
