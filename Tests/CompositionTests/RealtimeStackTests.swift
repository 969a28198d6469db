import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// The rollback path end to end through both protocols on the scripted server: consumer code never changes.
@Suite("RealtimeStack")
struct RealtimeStackTests {
    @Test("rollback: AppSync to GraphQL and back; the observer's stream never ends and sees events from both")
    func rollbackThroughBothProtocols() async throws {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        configuration.graphQLEndpoint = "ws://127.0.0.1:9/graphql"
        let server = ScriptedWebSocketServer()
        let stack = try RealtimeStack(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: server)
        let events = await stack.notifier.connectionEvents()
        var eventIterator = events.makeAsyncIterator()
        let roles = await stack.notifier.roleValues()
        var roleIterator = roles.makeAsyncIterator()

        // AppSync Events.
        let appsync = try await server.nextConnection()
        #expect(appsync.request.subprotocols.first == "aws-appsync-event-ws")
        _ = try await appsync.nextSentJSON()
        appsync.emit(#"{"type":"connection_ack"}"#)
        let subscribe = try await appsync.nextSentJSON()
        #expect(subscribe["channel"] as? String == "vortex-app/user/u-1/roleChanged")
        let appsyncID = try #require(subscribe["id"] as? String)
        appsync.emit(#"{"type":"subscribe_success","id":"\#(appsyncID)"}"#)
        appsync.emit(
            #"{"type":"data","id":"\#(appsyncID)","event":"{\"eventType\":\"user/roleChanged\",\"timestamp\":\"2026-11-22T05:00:00.000Z\",\"reason\":\"one\"}"}"#
        )
        #expect(await roleIterator.next()?.reason == "one")

        // Roll back to GraphQL.
        let switching = Task { try await stack.switchTransport(to: .graphql) }
        let graphql = try await server.nextConnection()
        #expect(graphql.request.subprotocols == ["graphql-transport-ws"])
        _ = try await graphql.nextSentJSON()
        graphql.emit(#"{"type":"connection_ack"}"#)
        let operation = try await graphql.nextSentJSON()
        let graphqlID = try #require(operation["id"] as? String)
        try await switching.value
        #expect(await stack.activeKind == .graphql)
        #expect(try await appsync.waitForClientClose().code == 1000)
        graphql.emit(
            #"{"id":"\#(graphqlID)","type":"next","payload":{"data":{"subscribeRoleChange":{"reason":"two","eventType":"user/roleChanged"}}}}"#
        )
        #expect(await roleIterator.next()?.reason == "two")

        // And back to AppSync.
        let back = Task { try await stack.switchTransport(to: .appsync) }
        let appsyncAgain = try await server.nextConnection()
        _ = try await appsyncAgain.nextSentJSON()
        appsyncAgain.emit(#"{"type":"connection_ack"}"#)
        let again = try #require(try await appsyncAgain.nextSentJSON()["id"] as? String)
        appsyncAgain.emit(#"{"type":"subscribe_success","id":"\#(again)"}"#)
        try await back.value
        appsyncAgain.emit(
            #"{"type":"data","id":"\#(again)","event":"{\"eventType\":\"user/roleChanged\",\"timestamp\":\"2026-11-22T05:00:00.000Z\",\"reason\":\"three\"}"}"#
        )
        #expect(await roleIterator.next()?.reason == "three")

        var switches: [String] = []
        while switches.count < 2, let event = await eventIterator.next() {
            if case .transportSwitched(let from, let to, _, .requested) = event { switches.append("\(from)->\(to)") }
        }
        #expect(switches == ["appsync->graphql", "graphql->appsync"])
        await stack.shutdown()
    }
}
