import BackendNotifier
import Foundation
import SubscriberCore
import Testing

@testable import Composition

/// The app-supplied GraphQL operations and the buffer limit of the configuration.
@Suite("GraphQL operations and buffer limit of the configuration")
struct ConfigurationOperationsTests {
    @Test("graphQLOperations from a JSON file reach the notifier; unknown upstreams are errors")
    func operationsFromJSON() throws {
        let json =
            #"{"graphQLEndpoint":"ws://127.0.0.1:1/graphql","transport":"graphql","graphQLOperations":{"role":{"query":"subscription($userId: String!) { subscribeRoleChange(userId: $userId) { reason } }"}}}"#
        let configuration = try RealtimeConfiguration().applyingJSON(Data(json.utf8))
        try configuration.validate()
        let operation = try #require(configuration.notifierConfiguration.graphQLOperations[.role])
        let request = NotifierUpstream.role.request(
            dialect: .graphQL, userId: "u-1", organizationId: "o-1", namespace: "vortex-app", operations: [.role: operation])
        #expect(request == .graphQL(GraphQLOperation(query: operation.query, variablesJSON: #"{"userId":"u-1"}"#)))
        var bad = configuration
        bad.graphQLOperations?["weather"] = .init(query: "subscription { rain }")
        #expect(throws: ConfigurationError.self) { try bad.validate() }
    }

    @Test("one bufferLimit governs the observers' buffers (the factory gives it to the transports)")
    func bufferLimit() throws {
        var configuration = RealtimeConfiguration()
        configuration.bufferLimit = 200_000
        #expect(configuration.notifierConfiguration.bufferPolicy.limit == 200_000)
        #expect(RealtimeConfiguration().bufferLimit == 1024)
    }
}
