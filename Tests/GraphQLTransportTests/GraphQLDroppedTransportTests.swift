import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

/// A transport that its owner drops without `disconnect()` must not live on in its own tasks.
@Suite("GraphQLTransport dropped without disconnect")
struct GraphQLDroppedTransportTests {
    @Test("the last reference gone, the transport is released, its connection closes and its streams finish")
    func droppedTransportEnds() async throws {
        let server = ScriptedWebSocketServer()
        var transport: GraphQLTransport? = GraphQLTransport(
            configuration: try GraphQLTransportConfiguration("ws://127.0.0.1:9/graphql"),
            auth: ScriptedAuthSession(.bearerToken("jwt-1")), connector: server, clock: ManualClock())
        weak let released = transport
        let states = await transport!.connectionStates()
        let probe = SubscriptionProbe(await transport!.subscribe(.graphQL(GraphQLHarness.deviceQuery)))
        let connection = try await server.nextConnection()
        #expect(try await connection.nextSentJSON()["type"] as? String == "connection_init")
        connection.emit(#"{"type":"connection_ack"}"#)
        #expect(try await connection.nextSentJSON()["type"] as? String == "subscribe")

        transport = nil
        #expect(released == nil)
        guard case .finished = try await probe.ending() else {
            Issue.record("the stream should finish without an error")
            return
        }
        _ = try await connection.waitForClientClose()
        // The state stream reports the end, then finishes.
        let last = try await withTestTimeout(5, "the state stream to finish") {
            var last: ConnectionState?
            for await state in states { last = state }
            return last
        }
        #expect(last == .disconnected(.requested))
    }
}
