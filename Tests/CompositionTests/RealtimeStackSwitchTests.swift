import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import Composition

/// The stack's switches and its failover task's life, on the scripted server.
@Suite("RealtimeStack: switches and the failover task")
struct RealtimeStackSwitchTests {
    /// A stack on the scripted server, observing roles, live on AppSync.
    static func liveStack(
        _ server: ScriptedWebSocketServer, failover: Bool = false
    ) async throws -> (RealtimeStack, ScriptedConnection, AsyncStream<RoleChangeOutput>) {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        configuration.graphQLEndpoint = "ws://127.0.0.1:9/graphql"
        configuration.failover.enabled = failover
        let stack = try RealtimeStack(
            configuration: configuration, auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: server, networkPathMonitor: nil)
        let roles = await stack.notifier.roleValues()
        let appsync = try await server.nextConnection()
        _ = try await appsync.nextSentJSON()
        appsync.emit(#"{"type":"connection_ack"}"#)
        let id = try #require(try await appsync.nextSentJSON()["id"] as? String)
        appsync.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        return (stack, appsync, roles)
    }

    @Test("a switch asked for while a switch to the other kind is under way runs after it: it is not dropped")
    func switchDuringSwitchIsKept() async throws {
        let server = ScriptedWebSocketServer()
        // The role stream stays observed: a switch without observers has nothing to subscribe and cuts over at once.
        let (stack, _, roles) = try await Self.liveStack(server)
        let toGraphQL = Task { try await stack.switchTransport(to: .graphql) }
        let graphql = try await server.nextConnection()
        // Still on AppSync while the switch to GraphQL waits for its subscription: the operator asks for AppSync.
        let back = Task { try await stack.switchTransport(to: .appsync) }
        try await withTestTimeout(5, "the switch back queued behind the first") {
            while await stack.notifier.pendingOperationCount < 2 { try await TestTime.pollPause() }
        }
        _ = try await graphql.nextSentJSON()
        graphql.emit(#"{"type":"connection_ack"}"#)
        let id = try #require(try await graphql.nextSentJSON()["id"] as? String)
        graphql.emit(
            #"{"id":"\#(id)","type":"next","payload":{"data":{"subscribeRoleChange":{"reason":"two","eventType":"user/roleChanged"}}}}"#)
        try await toGraphQL.boundedValue()
        // The switch back runs once the first has cut over.
        let appsync = try await server.nextConnection()
        _ = try await appsync.nextSentJSON()
        appsync.emit(#"{"type":"connection_ack"}"#)
        let again = try #require(try await appsync.nextSentJSON()["id"] as? String)
        appsync.emit(#"{"type":"subscribe_success","id":"\#(again)"}"#)
        try await back.boundedValue()
        #expect(await stack.activeKind == .appsync, "the operator's last request wins")
        await stack.shutdown()
        var iterator = roles.makeAsyncIterator()
        #expect(await iterator.next()?.reason == "two")
    }

    @Test("a stack with failover running that is dropped without shutdown is released; its failover task is cancelled")
    func droppedStackWithFailoverIsReleased() async throws {
        let server = ScriptedWebSocketServer()
        var (stack, appsync, roles): (RealtimeStack?, ScriptedConnection?, AsyncStream<RoleChangeOutput>?) = try await Self.liveStack(
            server, failover: true)
        let observers = stack!.notifier.connectionEventObserverCount
        await stack!.startFailover()
        let task = try #require(await stack!.failoverTask)
        let weakStack = WeakBox(stack!)
        let weakNotifier = WeakBox(stack!.notifier)
        // Let the watch start (and take what it holds): it observes the notifier's connection events first.
        try await waitUntil("the watch started") { weakNotifier.object?.connectionEventObserverCount ?? 0 > observers }
        roles = nil
        stack = nil
        #expect(roles == nil)
        do {
            try await withTestTimeout(5, "the stack and its notifier to be released") {
                while weakStack.object != nil || weakNotifier.object != nil { try await TestTime.pollPause() }
            }
        } catch {
            Issue.record("still alive: stack \(weakStack.object != nil), notifier \(weakNotifier.object != nil)")
        }
        #expect(task.isCancelled)
        // The released notifier closes its connection.
        #expect(try await appsync!.waitForClientClose().code == 1000)
        appsync = nil
    }
}
