import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// The rollback path end to end through both protocols on the scripted server: consumer code never changes.
@Suite("RealtimeStack", .timeLimit(.minutes(2)))
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
        try await switching.boundedValue()
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
        try await back.boundedValue()
        appsyncAgain.emit(
            #"{"type":"data","id":"\#(again)","event":"{\"eventType\":\"user/roleChanged\",\"timestamp\":\"2026-11-22T05:00:00.000Z\",\"reason\":\"three\"}"}"#
        )
        #expect(await roleIterator.next()?.reason == "three")

        var switches: [String] = []
        while switches.count < 2, let event = await eventIterator.next() {
            // Both switches were asked for over a live transport: make-before-break, an empty window.
            if case .transportSwitched(let from, let to, let gap, .requested) = event, gap.duration == 0 {
                switches.append("\(from)->\(to)")
            }
        }
        #expect(switches == ["appsync->graphql", "graphql->appsync"])
        await stack.shutdown()
        // The observers' streams end with the stack.
        #expect(await roleIterator.next() == nil)
    }

    /// A stack on the scripted server, observing roles, live on AppSync.
    static func liveStack(
        _ server: ScriptedWebSocketServer
    ) async throws -> (RealtimeStack, ScriptedConnection, AsyncStream<RoleChangeOutput>) {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        configuration.graphQLEndpoint = "ws://127.0.0.1:9/graphql"
        let stack = try RealtimeStack(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: server)
        let roles = await stack.notifier.roleValues()
        let appsync = try await server.nextConnection()
        _ = try await appsync.nextSentJSON()
        appsync.emit(#"{"type":"connection_ack"}"#)
        let id = try #require(try await appsync.nextSentJSON()["id"] as? String)
        appsync.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        return (stack, appsync, roles)
    }

    @Test("one record of the active transport: two switches to the same kind at once switch once; activeKind follows the notifier")
    func concurrentSwitchesToOneKind() async throws {
        let server = ScriptedWebSocketServer()
        let (stack, _, roles) = try await Self.liveStack(server)
        let events = await stack.notifier.connectionEvents()
        let first = Task { try await stack.switchTransport(to: .graphql) }
        let second = Task { try await stack.switchTransport(to: .graphql) }
        let graphql = try await server.nextConnection()
        _ = try await graphql.nextSentJSON()
        graphql.emit(#"{"type":"connection_ack"}"#)
        let id = try #require(try await graphql.nextSentJSON()["id"] as? String)
        // A first `next` confirms the GraphQL subscription at once.
        graphql.emit(
            #"{"id":"\#(id)","type":"next","payload":{"data":{"subscribeRoleChange":{"reason":"two","eventType":"user/roleChanged"}}}}"#)
        try await first.boundedValue()
        try await second.boundedValue()
        #expect(await stack.activeKind == .graphql)
        #expect(await stack.notifier.activeTransportName == "graphql")
        var iterator = roles.makeAsyncIterator()
        #expect(await iterator.next()?.reason == "two")
        await stack.shutdown()
        var switches = 0
        for await event in events {
            if case .transportSwitched = event { switches += 1 }
        }
        #expect(switches == 1, "the second switch found the notifier on GraphQL already")
    }

    @Test("a stack that is shut down releases its notifier and transports, and ends every observer's stream")
    func shutdownReleasesEverything() async throws {
        let server = ScriptedWebSocketServer()
        var (stack, appsync, roles): (RealtimeStack?, ScriptedConnection?, AsyncStream<RoleChangeOutput>?) = try await Self.liveStack(
            server)
        let consumer = Task { [roles] in
            var count = 0
            for await _ in roles! { count += 1 }
            return count
        }
        roles = nil
        let weakStack = WeakBox(stack!)
        let weakNotifier = WeakBox(stack!.notifier)
        let weakTransport = WeakBox(await stack!.notifier.activeTransport as AnyObject)
        await stack!.shutdown()
        #expect(try await appsync!.waitForClientClose().code == 1000)
        appsync = nil
        #expect(await consumer.value == 0)
        stack = nil
        do {
            try await withTestTimeout(5, "the stack, notifier and transport to be released") {
                while weakStack.object != nil || weakNotifier.object != nil || weakTransport.object != nil {
                    try await TestTime.pollPause()
                }
            }
        } catch {
            Issue.record(
                "still alive: stack \(weakStack.object != nil), notifier \(weakNotifier.object != nil), transport \(weakTransport.object != nil)"
            )
        }
    }
}

/// A weak reference a polling closure can hold.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
