import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

/// Issue 19 item 2 on AppSync Events: WebSocket pings after the quiet period, the `ka` fallback for a service that
/// ignores pings (the interval learned, never later than `connectionTimeoutMs`), probes — on the scripted server and a
/// manual clock, at the service's cadence (`ka` every 60 s, `connectionTimeoutMs` 300000).
@Suite("AppSync Events liveness: pings, the ka fallback, probes")
struct AppSyncLivenessTests {
    /// Subscribes to `default/a` on a fresh connection acknowledged with `timeoutMs` and confirms it.
    private func live(_ harness: AppSyncHarness, timeoutMs: Int = 300_000) async throws -> (SubscriptionProbe, ScriptedConnection, String) {
        let probe = await harness.subscribe("default/a")
        let connection = try await harness.acceptConnection(timeoutMs: timeoutMs)
        let id = try await AppSyncHarness.expectSubscribe(on: connection, channel: "default/a")
        connection.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        #expect(try await probe.next() == .live)
        return (probe, connection, id)
    }

    /// Sends `ka` and then an event, and waits for the event: the reader has handled the `ka` too.
    private func keepAlive(_ connection: ScriptedConnection, _ probe: SubscriptionProbe, id: String, _ n: Int) async throws {
        connection.emit(#"{"type":"ka"}"#)
        connection.emit(AppSyncHarness.dataFrame(id: id, event: #"{"n":\#(n)}"#))
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data(#"{"n":\#(n)}"#.utf8))))
    }

    @Test("a ping right after the ack, then one after each 30 s without a frame; frames hold pings off")
    func pingsAfterTheQuietPeriod() async throws {
        let harness = try AppSyncHarness()
        let (probe, connection, id) = try await live(harness)
        #expect(connection.pingCount == 1, "one ping at the ack, to learn whether the service answers pings")
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))  // answered: the next one after 30 s of silence
        harness.clock.advance(by: .seconds(29))
        connection.emit(AppSyncHarness.dataFrame(id: id, event: "1"))
        _ = try await probe.next()
        harness.clock.advance(by: .seconds(1))
        // The timer woke at 30 s, found the frame of 29 s, and sleeps until 59 s: no ping while frames arrive.
        try await harness.clock.waitForSleeper(sleeping: .seconds(29))
        #expect(connection.pingCount == 1)
        harness.clock.advance(by: .seconds(29))
        try await connection.waitForPings(2)
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))  // answered: the next one 30 s after the pong
        #expect(!connection.isClosed)
        await harness.transport.disconnect()
    }

    @Test("a link that answered pings and misses a pong is dropped at once; the gap starts at its last sign of life")
    func missedPong() async throws {
        let harness = try AppSyncHarness()
        let (probe, first, id) = try await live(harness)
        harness.clock.advance(by: .seconds(30))
        try await first.waitForPings(2)  // answered at 30 s
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        first.pingAnswering = .never
        harness.clock.advance(by: .seconds(30))
        try await first.waitForPings(3)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        #expect(try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a") == id)
        second.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        guard case .resumed(let gap) = try await probe.next() else { Issue.record("expected resumed(gap:)"); return }
        // The last sign of life was the pong at 30 s: the gap starts 2 s before it, not at the last frame (0 s) and
        // not when the silence was noticed (70 s); it ends at the confirmation (80 s).
        #expect(gap.start == Date(timeIntervalSince1970: 1_700_000_028))
        #expect(gap.duration == 52)
        await harness.transport.disconnect()
    }

    @Test("blackholed at the service's cadence: found at most 40 s after the last sign of life, on a link that answers pings")
    func blackholeAtServiceCadence() async throws {
        let harness = try AppSyncHarness()
        let (probe, first, id) = try await live(harness)
        try await keepAlive(first, probe, id: id, 0)
        harness.clock.advance(by: .seconds(30))
        try await first.waitForPings(2)
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(29))
        try await keepAlive(first, probe, id: id, 59)
        harness.clock.advance(by: .seconds(1))
        // The timer woke at 60 s for the quiet period after the pong of 30 s and found the frames of 59 s.
        try await harness.clock.waitForSleeper(sleeping: .seconds(29))
        first.pingAnswering = .never  // the blackhole: nothing arrives after 59 s
        harness.clock.advance(by: .seconds(29))
        try await first.waitForPings(3)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        #expect(!first.isClosed)
        harness.clock.advance(by: .seconds(10))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted, "dropped at 99 s: 40 s after the last frame, where connectionTimeoutMs would wait 300 s")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        let second = try await harness.acceptConnection()
        _ = try await AppSyncHarness.expectSubscribe(on: second, channel: "default/a")
        second.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        guard case .resumed(let gap) = try await probe.next() else { Issue.record("expected resumed(gap:)"); return }
        #expect(gap.start == Date(timeIntervalSince1970: 1_700_000_057), "the last frame (59 s) minus the 2 s margin")
        await harness.transport.disconnect()
    }

    @Test("a service that ignores pings while ka flows: one unanswered ping, no more, and one connection for an hour")
    func ignoredPingsNeverReconnect() async throws {
        let harness = try AppSyncHarness()
        harness.server.pingAnswering = .never
        let (probe, connection, id) = try await live(harness)
        for minute in 1...60 {
            harness.clock.advance(by: .seconds(60))
            try await keepAlive(connection, probe, id: id, minute)
        }
        #expect(connection.pingCount == 1)
        #expect(!connection.isClosed)
        #expect(harness.server.connectionCount == 1)
        await harness.transport.disconnect()
    }

    @Test("a service that ignores pings: after three ka 60 s apart, 2 × 60 + 10 s of silence ends the link (not 300 s)")
    func kaIntervalLearned() async throws {
        let harness = try AppSyncHarness()
        harness.server.pingAnswering = .never
        let (probe, connection, id) = try await live(harness)
        try await keepAlive(connection, probe, id: id, 0)
        harness.clock.advance(by: .seconds(10))
        // The first ping went unanswered: no more pings; connectionTimeoutMs (300 s) until an interval is learned.
        try await harness.clock.waitForSleeper(sleeping: .seconds(290))
        harness.clock.advance(by: .seconds(50))
        try await keepAlive(connection, probe, id: id, 60)
        harness.clock.advance(by: .seconds(60))
        try await keepAlive(connection, probe, id: id, 120)
        // Learned at 120 s (two intervals of 60 s): the watchdog ends the link at 120 + 130 s.
        try await harness.clock.waitForSleeper(sleeping: .seconds(130))
        #expect(!connection.isClosed)
        harness.clock.advance(by: .seconds(130))
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        #expect(connection.pingCount == 1)
        await harness.transport.disconnect()
    }

    @Test("the learned ka window is never later than connectionTimeoutMs")
    func kaWindowCappedByConnectionTimeout() async throws {
        let harness = try AppSyncHarness()
        harness.server.pingAnswering = .never
        let (probe, connection, id) = try await live(harness, timeoutMs: 100_000)
        try await keepAlive(connection, probe, id: id, 0)
        harness.clock.advance(by: .seconds(10))
        try await harness.clock.waitForSleeper(sleeping: .seconds(90))
        harness.clock.advance(by: .seconds(50))
        try await keepAlive(connection, probe, id: id, 60)
        harness.clock.advance(by: .seconds(60))
        try await harness.clock.waitForSleeper(sleeping: .seconds(40))  // woke at 100 s, found the frames of 60 s
        try await keepAlive(connection, probe, id: id, 120)
        harness.clock.advance(by: .seconds(40))
        // Two intervals plus the pong timeout would be 130 s; connectionTimeoutMs (100 s) wins: the end comes at 220 s.
        try await harness.clock.waitForSleeper(sleeping: .seconds(60))
        harness.clock.advance(by: .seconds(60))
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        await harness.transport.disconnect()
    }

    @Test("verifyConnection probes the link at once with the 3 s probe timeout; unanswered, the link is replaced")
    func verifyConnectionProbes() async throws {
        let harness = try AppSyncHarness()
        harness.server.pingAnswering = .manually
        let (_, first, _) = try await live(harness)
        first.answerPings()
        await harness.transport.verifyConnection()
        try await first.waitForPings(2)
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        harness.clock.advance(by: .seconds(3))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.acceptConnection()
        await harness.transport.disconnect()
    }

    @Test("a connector that cannot ping: the ka watchdog alone, as before pings joined the seam")
    func connectorWithoutPings() async throws {
        let harness = try AppSyncHarness()
        harness.server.pingAnswering = .unsupported
        let (_, connection, _) = try await live(harness, timeoutMs: 4000)
        try await harness.clock.waitForSleeper(sleeping: .seconds(4))
        harness.clock.advance(by: .seconds(4))
        _ = try await connection.waitForClientClose()
        #expect(connection.wasAborted)
        #expect(connection.pingCount == 0)
        await harness.transport.disconnect()
    }
}
