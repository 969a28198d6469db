import BackendNotifier
import Foundation
import RealtimeTesting
import SubscriberCore
import Testing
import URLSessionTestSupport

@testable import Composition

/// Issue 27: on the URLSession connector (the Apple platforms' default) over a task as hostile as Apple's — its
/// `receive()` ignores Swift cancellation and its server, silent once the subscriptions are made, never answers a ping
/// or a close — every way of ending a link finishes, on both transports, and releases the old link's task (it ended and
/// no receive waits on it: with this server only a drop gets there). The bounds only catch a hang: before the fix,
/// `disconnect()` and `shutdown()` waited for a frame that never came, and a sign-out or a switch returned while the old
/// link's reader waited on for ever. A connection that fails CFNetwork's way (its end reported, the reader's receive
/// never answered: WebKit PR #28392) is replaced, and `disconnect()` still returns; so is one whose pending send is never
/// answered either (moozzyk/SignalR-Client-Swift #226).
@Suite("The Apple path: ending a link never waits for a silent server")
struct ApplePathCancellationTests {
    private static let kinds: [RealtimeConfiguration.TransportKind] = [.appsync, .graphql]
    private static let hang: Double = 30

    private static func configuration(_ kind: RealtimeConfiguration.TransportKind) -> RealtimeConfiguration {
        var configuration = RealtimeConfiguration()
        configuration.transport = kind
        configuration.appSyncEndpoint = "http://127.0.0.1:9/event"
        configuration.graphQLEndpoint = "ws://127.0.0.1:9/graphql"
        return configuration
    }

    /// Waits until `task` carries a subscription (its `subscribe` was sent) and the link's reader waits on it.
    private static func subscribed(_ task: MockWebSocketTask) async throws {
        try await withTestTimeout(scriptedWait, "the subscribe to be sent") {
            while !task.sentMessages.contains(where: { message in
                guard case .text(let text) = message else { return false }
                return text.contains(#""type":"subscribe""#)
            }) {
                try await TestTime.pollPause()
            }
        }
        await task.waitForReceiver()
    }

    /// Waits until `task` is released: ended, with no receive waiting on it.
    private static func released(_ task: MockWebSocketTask) async throws {
        try await withTestTimeout(hang, "the old link's task to be released") {
            while !task.isReleased { try await TestTime.pollPause() }
        }
    }

    /// The link was ended on purpose, so its task was sent a close frame with 1000 before anything dropped it: a
    /// `cancel()` alone sends one without a code (Apple's `URLSessionWebSocketTask.cancel(with:reason:)` page), which a
    /// server counts as an abnormal closure.
    private static func expectClosedNormally(_ task: MockWebSocketTask, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(task.clientCloses.map(\.code) == [1000], sourceLocation: sourceLocation)
    }

    private static func stack(
        _ kind: RealtimeConfiguration.TransportKind, on server: MockWebSocketTaskServer
    ) throws -> RealtimeStack {
        try RealtimeStack(
            configuration: configuration(kind), auth: ScriptedAuthSession(.bearerToken("jwt")), userId: "u-1", organizationId: "o-1",
            connector: server.connector(), networkPathMonitor: nil)
    }

    /// A stack of `kind` on a silent server, observing roles, with its one subscription sent and its reader waiting.
    private static func subscribedStack(
        _ kind: RealtimeConfiguration.TransportKind
    ) async throws -> (MockWebSocketTaskServer, RealtimeStack, AsyncStream<RoleChangeOutput>, MockWebSocketTask) {
        let server = MockWebSocketTaskServer.silentAfterSubscribing()
        let stack = try stack(kind, on: server)
        let roles = await stack.notifier.roleValues()
        let task = try await server.nextTask()
        try await subscribed(task)
        return (server, stack, roles, task)
    }

    @Test("a transport's disconnect() returns and ends its task", arguments: kinds)
    func transportDisconnect(kind: RealtimeConfiguration.TransportKind) async throws {
        let server = MockWebSocketTaskServer.silentAfterSubscribing()
        let factory = TransportFactory(
            configuration: Self.configuration(kind), auth: ScriptedAuthSession(.bearerToken("jwt")), connector: server.connector())
        let transport = try factory.make(kind)
        let request: SubscriptionRequest =
            kind == .appsync
            ? .channel("vortex-app/user/u-1/roleChanged")
            : .graphQL(GraphQLOperation(query: "subscription { subscribeRoleChange { reason } }"))
        let stream = await transport.subscribe(request)
        let task = try await server.nextTask()
        try await Self.subscribed(task)

        try await withTestTimeout(Self.hang, "disconnect() to return") { await transport.disconnect() }
        #expect(task.isReleased)
        Self.expectClosedNormally(task)
        var iterator = stream.makeAsyncIterator()
        while let event = try await iterator.next() {
            if case .payload = event { Issue.record("no payload was sent") }
        }
    }

    @Test(
        "a connection that fails without a close frame, CFNetwork's way (no receive answered), is replaced; disconnect() returns",
        arguments: kinds)
    func failureLikeCFNetwork(kind: RealtimeConfiguration.TransportKind) async throws {
        let server = MockWebSocketTaskServer.silentAfterSubscribing()
        let factory = TransportFactory(
            configuration: Self.configuration(kind), auth: ScriptedAuthSession(.bearerToken("jwt")), connector: server.connector())
        let transport = try factory.make(kind)
        let request: SubscriptionRequest =
            kind == .appsync
            ? .channel("vortex-app/user/u-1/roleChanged")
            : .graphQL(GraphQLOperation(query: "subscription { subscribeRoleChange { reason } }"))
        let stream = await transport.subscribe(request)
        let old = try await server.nextTask()
        try await Self.subscribed(old)

        old.serverFailsLikeCFNetwork("The network connection was lost.")
        // The link ends although its reader's receive is never answered, and the supervisor opens a new one.
        let new = try await server.nextTask(timeout: Self.hang)
        try await Self.subscribed(new)
        #expect(old.unansweredReceiveCount == 1)

        try await withTestTimeout(Self.hang, "disconnect() to return") { await transport.disconnect() }
        #expect(new.isReleased)
        var iterator = stream.makeAsyncIterator()
        while let event = try await iterator.next() {
            if case .payload = event { Issue.record("no payload was sent") }
        }
    }

    @Test(
        "a send CFNetwork never completes (the loss reported, its handler never called, cancel() neither) does not hold the link: the transport reconnects and disconnect() returns",
        .timeLimit(.minutes(2)), arguments: kinds)
    func stuckSendLikeCFNetwork(kind: RealtimeConfiguration.TransportKind) async throws {
        let server = MockWebSocketTaskServer.silentAfterSubscribing()
        let factory = TransportFactory(
            configuration: Self.configuration(kind), auth: ScriptedAuthSession(.bearerToken("jwt")), connector: server.connector())
        let transport = try factory.make(kind)
        let requests: [SubscriptionRequest] =
            kind == .appsync
            ? [.channel("vortex-app/user/u-1/roleChanged"), .channel("vortex-app/user/u-1/presence")]
            : [
                .graphQL(GraphQLOperation(query: "subscription { subscribeRoleChange { reason } }")),
                .graphQL(GraphQLOperation(query: "subscription { subscribePresence { status } }")),
            ]
        let first = await transport.subscribe(requests[0])
        let old = try await server.nextTask()
        try await Self.subscribed(old)

        // The server stops reading, so the second subscribe waits in the task's send; then the network goes.
        old.serverStopsReading()
        let second = await transport.subscribe(requests[1])
        try await withTestTimeout(Self.hang, "the second subscribe to wait in the task") {
            while old.pendingSendCount == 0 { try await TestTime.pollPause() }
        }
        old.serverFailsLikeCFNetwork("The network connection was lost.", sendsNeverComplete: true)
        let new = try await server.nextTask(timeout: Self.hang)
        try await Self.subscribed(new)
        #expect(old.unansweredSendCount == 1)

        try await withTestTimeout(Self.hang, "disconnect() to return") { await transport.disconnect() }
        #expect(new.isReleased)
        for stream in [first, second] {
            var iterator = stream.makeAsyncIterator()
            while let event = try await iterator.next() {
                if case .payload = event { Issue.record("no payload was sent") }
            }
        }
    }

    @Test("shutdown() returns and ends the task", arguments: kinds)
    func stackShutdown(kind: RealtimeConfiguration.TransportKind) async throws {
        let (_, stack, roles, task) = try await Self.subscribedStack(kind)

        try await withTestTimeout(Self.hang, "shutdown() to return") { await stack.shutdown() }
        #expect(task.isReleased)
        Self.expectClosedNormally(task)
        for await _ in roles { Issue.record("no role change was sent") }
    }

    @Test("sign-out (update(userId: nil, …)) returns and ends the task", arguments: kinds)
    func signOut(kind: RealtimeConfiguration.TransportKind) async throws {
        let (_, stack, roles, task) = try await Self.subscribedStack(kind)

        try await withTestTimeout(Self.hang, "update(userId: nil) to return") {
            await stack.notifier.update(userId: nil, organizationId: nil)
        }
        try await Self.released(task)
        Self.expectClosedNormally(task)
        await stack.shutdown()
        for await _ in roles {}
    }

    @Test("a planned switch returns, and the old link's task is ended", arguments: kinds)
    func plannedSwitch(from kind: RealtimeConfiguration.TransportKind) async throws {
        let target: RealtimeConfiguration.TransportKind = kind == .appsync ? .graphql : .appsync
        let (server, stack, roles, old) = try await Self.subscribedStack(kind)

        try await withTestTimeout(Self.hang, "the switch to return") { try await stack.switchTransport(to: target) }
        #expect(await stack.activeKind == target)
        try await Self.released(old)
        Self.expectClosedNormally(old)
        let new = try await server.nextTask()
        #expect(!new.isReleased, "the new link carries on")

        try await withTestTimeout(Self.hang, "shutdown() to return") { await stack.shutdown() }
        #expect(new.isReleased)
        for await _ in roles {}
    }
}
