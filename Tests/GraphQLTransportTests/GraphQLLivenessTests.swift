import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import GraphQLTransport

/// Issue 19 item 2 on graphql-transport-ws: WebSocket pings after the quiet period (default 30 s), the protocol's
/// `ping` as the fallback for a server that ignores them, probes — on the scripted server and a manual clock.
@Suite("GraphQL liveness: WebSocket pings, the protocol-ping fallback, probes")
struct GraphQLLivenessTests {
    /// A `next` for `id` carrying `n`, and waits for it: the reader has handled everything sent before it.
    private func event(_ connection: ScriptedConnection, _ probe: SubscriptionProbe, id: String, _ n: Int) async throws {
        connection.emit(#"{"type":"next","id":"\#(id)","payload":{"data":{"subscribeDeviceState":{"n":\#(n)}}}}"#)
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data(#"{"n":\#(n)}"#.utf8))))
    }

    @Test("a server that answers WebSocket pings: one every 30 s of silence, and no protocol ping at all")
    func webSocketPings() async throws {
        let harness = try GraphQLHarness()
        let (_, connection, _) = try await harness.live()  // the clock is at 2 s
        #expect(connection.pingCount == 1)
        harness.clock.advance(by: .seconds(28))
        try await connection.waitForPings(2)
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(30))
        try await connection.waitForPings(3)
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        #expect(!connection.sentTexts.contains { $0.contains(#""ping""#) })
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("a server that ignores WebSocket pings and answers the protocol's: one connection for an hour")
    func ignoredPingsNeverReconnect() async throws {
        let harness = try GraphQLHarness()
        harness.server.pingAnswering = .never
        let (probe, connection, id) = try await harness.live()
        harness.clock.advance(by: .seconds(28))  // 30 s: the first ping went unanswered at 10 s; the protocol's is due
        for round in 1...120 {
            #expect(try await connection.nextSentJSON()["type"] as? String == "ping", "round \(round)")
            connection.emit(#"{"type":"pong"}"#)
            try await event(connection, probe, id: id, round)
            harness.clock.advance(by: .seconds(30))
        }
        #expect(connection.pingCount == 1)
        #expect(!connection.isClosed)
        #expect(harness.server.connectionCount == 1)
        await harness.transport.disconnect()
    }

    @Test("silent from the ack on a server that never answers pings: the protocol's ping at 30 s, the link dropped at 40 s")
    func silentFromTheAck() async throws {
        let harness = try GraphQLHarness()
        harness.server.pingAnswering = .never
        let (probe, connection, _) = try await harness.live()
        harness.clock.advance(by: .seconds(28))
        #expect(try await connection.nextSentJSON()["type"] as? String == "ping")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        _ = try await GraphQLHarness.expectSubscribe(on: second)
        try await harness.passConfirmationWindow()
        guard case .resumed(let gap) = try await probe.next() else { Issue.record("expected resumed(gap:)"); return }
        // The last frame was the ack at 0 s: the gap starts 2 s before it and ends at the confirmation (52 s).
        #expect(gap.start == Date(timeIntervalSince1970: 1_699_999_998))
        #expect(gap.duration == 54)
        await harness.transport.disconnect()
    }

    @Test("a link that answered WebSocket pings and misses a pong is dropped at once; the gap starts at the last pong")
    func missedPong() async throws {
        let harness = try GraphQLHarness()
        let (probe, connection, id) = try await harness.live()
        try await event(connection, probe, id: id, 1)  // at 2 s
        harness.clock.advance(by: .seconds(30))
        try await connection.waitForPings(2)  // answered at 32 s
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        connection.pingAnswering = .never
        harness.clock.advance(by: .seconds(30))
        try await connection.waitForPings(3)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        #expect(!connection.sentTexts.contains { $0.contains(#""ping""#) }, "a link that answers pings never needs the protocol's")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        _ = try await GraphQLHarness.expectSubscribe(on: second)
        second.emit(#"{"type":"next","id":"\#(id)","payload":{"data":{"subscribeDeviceState":{"n":2}}}}"#)
        guard case .resumed(let gap) = try await probe.next() else { Issue.record("expected resumed(gap:)"); return }
        #expect(gap.start == Date(timeIntervalSince1970: 1_700_000_030), "the pong at 32 s minus the 2 s margin")
        await harness.transport.disconnect()
    }

    @Test("verifyConnection on a server that ignores WebSocket pings: the protocol's ping with the 3 s probe timeout")
    func verifyWithTheProtocolPing() async throws {
        let harness = try GraphQLHarness()
        harness.server.pingAnswering = .never
        let (_, connection, _) = try await harness.live()
        harness.clock.advance(by: .seconds(8))  // 10 s: the ack's ping went unanswered
        try await harness.clock.waitForSleeper(sleeping: .seconds(20))  // the protocol's ping is due at 30 s
        await harness.transport.verifyConnection()
        #expect(try await connection.nextSentJSON()["type"] as? String == "ping")
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        harness.clock.advance(by: .seconds(3))
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        await harness.transport.disconnect()
    }

    @Test("quietPeriod nil: no pings of either kind")
    func noPings() async throws {
        let harness = try GraphQLHarness { $0.link.liveness.quietPeriod = nil }
        harness.server.pingAnswering = .never
        let (_, connection, _) = try await harness.live()
        #expect(connection.pingCount == 0)
        // Nothing is due once the confirmation window passed: the timer waits for a poke, not for the clock.
        try await withTestTimeout(5, "the timer to go idle") {
            while harness.clock.sleeperCount > 0 { try await TestTime.pollPause() }
        }
        harness.clock.advance(by: .seconds(3600))
        await harness.transport.disconnect()
        #expect(!connection.sentTexts.contains { $0.contains(#""ping""#) })
        #expect(!connection.wasAborted)
    }
}
