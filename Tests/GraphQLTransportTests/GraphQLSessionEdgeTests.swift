import Foundation
import Logging
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

/// The edges of a run's life: a cancel while connecting, a subscribe racing a stop, a subscribe after a sign-out.
@Suite("GraphQL: cancel while connecting, subscribe racing a stop, subscribe after sign-out", .timeLimit(.minutes(2)))
struct GraphQLSessionEdgeTests {
    /// Subscribes, takes the connection and its `connection_init`, cancels, and acknowledges once the cancel is in.
    private static func cancelBeforeAck(_ harness: GraphQLHarness) async throws -> ScriptedConnection {
        let probe = await harness.subscribe()
        let connection = try await harness.server.nextConnection()
        #expect(try await connection.nextSentJSON()["type"] as? String == "connection_init")
        probe.cancel()
        let engine = harness.transport.engine
        try await waitUntil("the cancel reaches the session") { engine.session?.wantsConnection == false }
        connection.emit(#"{"type":"connection_ack"}"#)
        return connection
    }

    @Test("cancelled before the ack: the link closes once acknowledged, instead of pinging with nothing subscribed")
    func cancelWhileConnecting() async throws {
        let harness = try GraphQLHarness()
        let connection = try await Self.cancelBeforeAck(harness)
        #expect(try await connection.waitForClientClose().code == 1000)
        #expect(connection.sentTexts.count == 1, "only connection_init: no subscribe went out")
    }

    @Test("cancelled before the ack, with an idle delay: the link closes when the delay passes on the clock")
    func cancelWhileConnectingIdleDelay() async throws {
        let harness = try GraphQLHarness { $0.idleCloseDelay = .seconds(5) }
        let connection = try await Self.cancelBeforeAck(harness)
        try await harness.clock.waitForSleeper(sleeping: .seconds(5))
        #expect(!connection.isClosed)
        harness.clock.advance(by: .seconds(5))
        #expect(try await connection.waitForClientClose().code == 1000)
    }

    @Test("a subscribe that found the run alive just before it stopped goes to a new run instead of waiting for ever")
    func subscribeRacingStop() async throws {
        let harness = try GraphQLHarness()
        let transport = harness.transport
        let made = Locked(0)
        let (reader, sink) = SubscriptionSink.make(bufferLimit: 8, label: "race", logger: Logger(label: "test"))
        let probe = SubscriptionProbe(reader.elements)
        let state = transport.engine.withRunning({ requests in
            let (state, links) = transport.makeState(requests)
            made.withLock { $0 += 1 }
            guard made.withLock({ $0 }) == 1 else { return (state, links) }
            // The first run stops right after `running` found it alive, and its supervisor is gone: it is given another
            // state's links, so it never connects for this one.
            state.stop(error: .signedOut)
            return (state, transport.makeState(requests).1)
        }) { state in
            state.add(id: "op-1", operation: GraphQLHarness.deviceQuery, sink: sink)
            return state
        }
        #expect(!state.stopped && made.withLock { $0 } == 2)
        let connection = try await harness.acceptConnection()
        #expect(try await GraphQLHarness.expectSubscribe(on: connection) == "op-1")
        try await harness.passConfirmationWindow()
        #expect(try await probe.next() == .live)
        await transport.disconnect()
    }

    @Test("signed out on an open link: a new subscribe fails with signedOut and is not sent; the live one carries on")
    func subscribeAfterSignOut() async throws {
        let harness = try GraphQLHarness()
        let (first, connection, firstID) = try await harness.live()
        harness.auth.setSignedIn(false)
        let second = await harness.subscribe()
        guard case .failed(let error) = try await second.ending() else { Issue.record("must fail"); return }
        #expect(error as? RealtimeError == .signedOut)
        first.cancel()
        let frame = try await connection.nextSentJSON()
        #expect(frame["type"] as? String == "complete" && frame["id"] as? String == firstID, "no subscribe went out before it")
        #expect(try await connection.waitForClientClose().code == 1000)
    }
}
