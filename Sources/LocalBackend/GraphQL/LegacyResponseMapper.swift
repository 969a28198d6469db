import GraphQL

/// Turns one subscription's source events into its `next` messages, as GraphQLSwift's `subscribe` does ("MapSourceToResponseEvent"):
/// each event is the root value of an execution of the operation's document.
///
/// GraphQLSwift's own response stream puts a task between the source and the consumer and runs every field of every
/// event as a child task; the connection iterates the source itself and asks this mapper for each message:
/// - a plain selection (``LegacySelectionPlan``) is written straight from the event;
/// - anything else, and any event the plan declines, is executed by GraphQLSwift's `execute` on the parsed document,
///   the same call its `subscribe` makes per event (reached through the public persisted-query entry point, which
///   executes a document without parsing or validating it again).
struct LegacyResponseMapper: Sendable {
    /// The operation's id (the messages' `id`).
    let id: String
    let schema: GraphQLSchema
    /// The document GraphQLSwift validated and subscribed.
    let document: Document
    let context: LegacyGraphQLContext
    let variables: [String: Map]
    let operationName: String?
    /// The compiled selection, `nil` when the document is not a plain one.
    let plan: LegacySelectionPlan?

    init(
        id: String, schema: GraphQLSchema, document: Document, context: LegacyGraphQLContext, variables: [String: Map],
        operationName: String?
    ) {
        self.id = id
        self.schema = schema
        self.document = document
        self.context = context
        self.variables = variables
        self.operationName = operationName
        self.plan = LegacySelectionPlan(document: document, operationName: operationName, schema: schema)
    }

    /// The `next` message for one source event.
    func message(for source: LegacyEventSource) async throws -> String {
        if let data = plan?.data(for: source) { return GraphQLServerMessage.next(id: id, data: data) }
        return GraphQLServerMessage.next(id: id, try await execute(source))
    }

    /// GraphQLSwift's execution of the document with `source` as its root value.
    func execute(_ source: LegacyEventSource) async throws -> GraphQLResult {
        try await graphql(
            queryRetrieval: ParsedDocument(schema: schema, document: document), queryId: 0, rootValue: source, context: context,
            variableValues: variables, operationName: operationName)
    }

    /// The one document, already parsed and validated.
    private struct ParsedDocument: PersistedQueryRetrieval {
        let schema: GraphQLSchema
        let document: Document

        func lookup(_ id: Int) throws -> PersistedQueryRetrievalResult<Int> { .result(schema, document) }
    }
}
