import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

/// A GraphQL transport wired to the scripted server, a manual clock and ids `op-1`, `op-2`, ...
struct GraphQLHarness {
    let server = ScriptedWebSocketServer()
    let clock = ManualClock()
    let auth: ScriptedAuthSession
    let transport: GraphQLTransport

    static let deviceQuery = GraphQLOperation(
        query: "subscription ($orgId: String!) { subscribeDeviceState(orgId: $orgId) { mac online } }",
        variablesJSON: #"{"orgId":"o-1"}"#)

    init(
        auth: ScriptedAuthSession = ScriptedAuthSession(.bearerToken("jwt-1")),
        configure: (inout GraphQLTransportConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = try GraphQLTransportConfiguration("ws://127.0.0.1:9/graphql")
        // The tests' timelines were written for a fixed 10 s backoff (the default before the jittered one).
        configuration.link.reconnectPolicy = .fixed(.seconds(10))
        configure(&configuration)
        let counter = Locked(0)
        let clock = self.clock
        self.auth = auth
        transport = GraphQLTransport(
            configuration: configuration, auth: auth, connector: server, clock: clock,
            wallClock: WallClock { Date(timeIntervalSince1970: 1_700_000_000 + Double(clock.now.offset.components.seconds)) },
            makeID: {
                counter.withLock { value in
                    value += 1
                    return "op-\(value)"
                }
            })
    }

    func subscribe(_ operation: GraphQLOperation = GraphQLHarness.deviceQuery) async -> SubscriptionProbe {
        SubscriptionProbe(await transport.subscribe(.graphQL(operation)))
    }

    /// Takes the next connection, checks its `connection_init`, and acknowledges it.
    func acceptConnection(expectToken token: String = "jwt-1") async throws -> ScriptedConnection {
        let connection = try await server.nextConnection()
        #expect(connection.request.subprotocols == ["graphql-transport-ws"])
        let initFrame = try await connection.nextSentJSON()
        #expect(initFrame["type"] as? String == "connection_init")
        #expect(initFrame["payload"] as? [String: String] == ["Authorization": token])
        connection.emit(#"{"type":"connection_ack"}"#)
        return connection
    }

    /// Reads the next frame, expecting `subscribe`, and returns its id.
    static func expectSubscribe(on connection: ScriptedConnection) async throws -> String {
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "subscribe")
        return try #require(frame["id"] as? String)
    }

    /// Lets the live-confirmation window pass: a subscription without an `error` by then counts as live.
    func passConfirmationWindow() async throws {
        try await clock.waitForSleeper(sleeping: .seconds(2))
        clock.advance(by: .seconds(2))
    }

    /// A live subscription on an acknowledged connection (confirmed by the window passing without an `error`).
    func live() async throws -> (SubscriptionProbe, ScriptedConnection, String) {
        let probe = await subscribe()
        let connection = try await acceptConnection()
        let id = try await Self.expectSubscribe(on: connection)
        try await passConfirmationWindow()
        #expect(try await probe.next() == .live)
        return (probe, connection, id)
    }
}
