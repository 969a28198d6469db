import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// The stack's part in ending a failback: which switches the app asks for start the failover watch again.
@Suite("RealtimeStack: a switch asked for during a failback")
struct RealtimeStackFailbackTests {
    @Test("a no-op switch restarts the failover watch only while it fails back, and only for the transport failed over to")
    func noOpSwitchRestartsOnlyFailback() async throws {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        configuration.graphQLEndpoint = "ws://127.0.0.1:9/graphql"
        configuration.failover.enabled = true
        // Nothing observed: a switch has nothing to subscribe and cuts over at once.
        let stack = try RealtimeStack(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: ScriptedWebSocketServer(), clock: ManualClock(), networkPathMonitor: nil)
        await stack.startFailover()
        let first = try #require(await stack.failoverTask)
        try await stack.switchTransport(to: .appsync)
        #expect(await stack.failoverTask === first, "a no-op switch while watching leaves the watch be")

        // As the watch marks it when it decides to fail over from AppSync, its preferred transport.
        let phase = await stack.failbackPhase
        phase.begin()
        try await stack.switchTransport(to: .appsync)
        #expect(await stack.failoverTask === first, "a no-op switch to the preferred transport leaves the failback be")
        // The failover to GraphQL, as the watch makes it; then the operator's rollback to GraphQL, a no-op.
        let graphql = try stack.factory.make(.graphql)
        try await stack.notifier.switchTransport(to: graphql, because: .failover("test"), onlyFromOtherDialect: true)
        try await stack.switchTransport(to: .graphql)
        let watching = try #require(await stack.failoverTask)
        #expect(watching !== first && first.isCancelled, "the rollback ends the failback: the watch starts again")
        #expect(phase.isInterrupted)

        try await stack.switchTransport(to: .graphql)
        #expect(await stack.failoverTask === watching, "a no-op switch while watching leaves the watch be")
        try await stack.switchTransport(to: .appsync)
        let restarted = try #require(await stack.failoverTask)
        #expect(restarted !== watching && watching.isCancelled, "a switch restarts the watch on the transport switched to")
        await stack.shutdown()
    }
}
