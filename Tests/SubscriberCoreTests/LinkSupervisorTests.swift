import Foundation
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// Polls `condition` (in real time, briefly yielding) until it holds.
private func waitUntil(_ what: String, timeout: Double = 5, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withTestTimeout(timeout, what) {
        while !condition() { try await TestTime.pollPause() }
    }
}

/// `LinkSupervisor` on its own (issue 21): the reconnect schedule, the network path, probes and verifyConnection, the
/// auth retry — over the scripted server and a manual clock, with a minimal protocol.
@Suite("LinkSupervisor")
struct LinkSupervisorTests {
    @Test("the default policy: the first attempt within a second, then full jitter up to 2, 4, 8 and 10 s; a lasting link restarts it")
    func defaultSchedule() async throws {
        let harness = SupervisorHarness()  // random 0.5: half of each capped delay
        let first = try await harness.accept()
        try await harness.waitFor(.connected)
        harness.server.refuseNextConnections(4)
        first.failTransport()
        let delays: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5)]
        for (index, delay) in delays.enumerated() {
            try await harness.waitFor(.reconnecting(attempt: index + 1, delay: delay))
            try await harness.clock.waitForSleeper(sleeping: delay)
            harness.clock.advance(by: delay)
        }
        let second = try await harness.accept()
        try await waitUntil("the second connection acknowledged") {
            harness.recordedStates.filter { $0 == .connected }.count == 2
        }
        try await harness.clock.waitForSleeper(sleeping: SupervisorStateMachine.backoffRestartsAfter)  // the quiet period
        harness.clock.advance(by: SupervisorStateMachine.backoffRestartsAfter)
        second.failTransport()
        try await waitUntil("attempt 1 again") {
            harness.recordedStates.filter { $0 == .reconnecting(attempt: 1, delay: .milliseconds(500)) }.count == 2
        }
        #expect(harness.server.requests.count == 6)
        await harness.stop()
    }

    @Test("the last failure: why the connection was lost or refused, each time anew")
    func lastFailure() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        let first = try await harness.accept()
        try await harness.waitFor(.connected)
        #expect(harness.outage.withLock { $0.lastFailure } == nil)
        harness.server.refuseNextConnections(1, with: .connectionFailed("CERTIFICATE_VERIFY_FAILED"))
        first.failTransport()
        try await harness.waitFor(.reconnecting(attempt: 1, delay: .seconds(10)))
        #expect(harness.outage.withLock { $0.lastFailure } == "closed by the server, close 1006 connection reset (remote)")
        let lostAt = try #require(harness.outage.withLock { $0.lostAt }, "the acknowledged link's loss starts the outage")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        try await harness.waitFor(.reconnecting(attempt: 2, delay: .seconds(10)))
        #expect(harness.outage.withLock { $0.lastFailure } == "open failed: WebSocket connection failed: CERTIFICATE_VERIFY_FAILED")
        #expect(harness.outage.withLock { $0.lostAt } == lostAt, "a failed attempt does not move the outage's start")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.accept()
        try await waitUntil("connected again") { harness.recordedStates.filter { $0 == .connected }.count == 2 }
        #expect(harness.outage.withLock { $0.lastFailure } == "open failed: WebSocket connection failed: CERTIFICATE_VERIFY_FAILED")
        await harness.stop()
    }

    @Test("no network while backing off: the backoff timer is dropped and nothing is attempted; back: a reconnect at once")
    func pathLostWhileBackingOff() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        let first = try await harness.accept()
        first.failTransport()
        try await harness.waitFor(.reconnecting(attempt: 1, delay: .seconds(10)))
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.monitor.update(.unsatisfied)
        try await waitUntil("the backoff timer to go") { harness.clock.sleeperCount == 0 }
        harness.clock.advance(by: .seconds(60))  // no timer is left to fire
        #expect(harness.server.requests.count == 1)
        harness.monitor.update(.satisfied(.cellular))
        _ = try await harness.accept()
        #expect(harness.server.requests.count == 2)
        await harness.stop()
    }

    @Test("a link lost while there is no network: no attempt and no timer until the network is back, then at once")
    func linkLostWithoutNetwork() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        let first = try await harness.accept()
        harness.monitor.update(.unsatisfied)
        try await harness.log.waitFor("network path changed")
        first.failTransport()
        try await harness.log.waitFor("the reconnect waits for it")
        #expect(harness.clock.sleeperCount == 0, "no backoff timer burns without a network")
        #expect(harness.server.requests.count == 1)
        harness.monitor.update(.satisfied(.wifi))
        _ = try await harness.accept()
        #expect(harness.server.requests.count == 2)
        await harness.stop()
    }

    @Test("no network before the first connection: it waits, and connects as soon as the path is satisfied")
    func startsWithoutNetwork() async throws {
        // The first attempt may be under way before the path arrives: it is refused, and then only the wait remains.
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)), path: .unsatisfied, refusing: 1)
        try await harness.log.waitFor("the reconnect waits for it")
        #expect(harness.clock.sleeperCount == 0, "no backoff timer burns without a network")
        harness.monitor.update(.satisfied(.wired))
        _ = try await harness.accept()
        await harness.stop()
    }

    @Test(
        "an interface change, or another Wi-Fi network, probes the open link with the short timeout: unanswered, it is replaced",
        arguments: [NetworkPath.satisfied(.cellular), .satisfied(.wifi, gateways: ["10.0.0.1:0"])])
    func interfaceChangeReplacesADeadLink(to path: NetworkPath) async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        harness.server.pingAnswering = .manually
        let first = try await harness.accept()
        try await first.waitForPings(1)
        first.answerPings()  // the link answers pings
        harness.monitor.update(path)
        try await first.waitForPings(2)  // the probe goes out at once: the clock never moved
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        harness.clock.advance(by: .seconds(3))
        _ = try await first.waitForClientClose()
        #expect(first.wasAborted)
        try await waitUntil("the link's report") { !harness.links.ended.isEmpty }
        #expect(harness.links.ended.first?.end == .pongTimeout(.seconds(3)))
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.accept()
        await harness.stop()
    }

    @Test("an interface change probes the open link: answered, it stays")
    func interfaceChangeKeepsALiveLink() async throws {
        let harness = SupervisorHarness()
        harness.server.pingAnswering = .manually
        let first = try await harness.accept()
        try await first.waitForPings(1)
        first.answerPings()
        harness.monitor.update(.satisfied(.cellular))
        try await first.waitForPings(2)
        // The probe's deadline first, then its pong (recorded as answerPings returns): answered before the timer took
        // the probe's deadline, the timer would go straight to the quiet period and no 3 s deadline would ever exist.
        try await harness.clock.waitForSleeper(sleeping: .seconds(3))
        first.answerPings()
        harness.clock.advance(by: .seconds(3))
        // The probe's deadline passed with its pong in: the next deadline is the quiet period after the pong.
        try await harness.clock.waitForSleeper(sleeping: .seconds(27))
        #expect(!first.isClosed)
        #expect(harness.links.ended.isEmpty)
        await harness.stop()
    }

    @Test("network back with the link still open: the link is probed")
    func networkBackProbesTheLink() async throws {
        let harness = SupervisorHarness()
        let first = try await harness.accept()
        try await first.waitForPings(1)
        harness.monitor.update(.unsatisfied)
        harness.monitor.update(.satisfied(.wifi))
        try await first.waitForPings(2)
        #expect(harness.server.requests.count == 1)
        await harness.stop()
    }

    @Test("verifyConnection: the open link is probed; while backing off, the transport reconnects at once")
    func verifyConnection() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        let first = try await harness.accept()
        try await first.waitForPings(1)
        harness.request(.verifyConnection)
        try await first.waitForPings(2)
        first.failTransport()
        try await harness.waitFor(.reconnecting(attempt: 1, delay: .seconds(10)))
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.request(.verifyConnection)
        _ = try await harness.accept()
        #expect(harness.server.requests.count == 2)
        await harness.stop()
    }

    @Test("an auth refusal is retried at once with refreshed credentials; a second one stops with sessionExpired")
    func authRefusal() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        for _ in 0..<2 {
            let connection = try await harness.server.nextConnection()
            #expect(try await connection.nextSentText() == "hello")
            connection.emit("refused")
        }
        try await waitUntil("the supervisor to stop") { harness.links.stopped != nil }
        #expect(harness.links.stopped == .sessionExpired)
        #expect(harness.auth.credentialRequests == [false, true])
        await harness.stop()
    }

    @Test("an AuthSession that does not answer fails the attempt after the ack timeout; the next one waits for the same call")
    func credentialsUnanswered() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        let first = try await harness.accept()
        harness.auth.holdCredentials()  // ignores cancellation, as a hung identity provider would
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        try await harness.auth.waitForHeldCalls(1)
        try await harness.clock.waitForSleeper(sleeping: .seconds(15))
        harness.clock.advance(by: .seconds(15))
        try await harness.waitFor(.reconnecting(attempt: 2, delay: .seconds(10)))
        #expect(harness.outage.withLock { $0.lastFailure } == "the AuthSession gave no credentials within 15.0 seconds")
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        try await harness.clock.waitForSleeper(sleeping: .seconds(15))
        // The second attempt waits for the call still running instead of asking the session again.
        #expect(harness.auth.credentialRequests == [false, false])
        #expect(harness.auth.heldCount == 1)
        harness.auth.releaseCredentials()
        _ = try await harness.accept()
        try await waitUntil("connected again") { harness.recordedStates.filter { $0 == .connected }.count == 2 }
        #expect(harness.server.requests.count == 2)
        await harness.stop()
    }

    @Test("an AuthSession that throws (offline, say) is retried after the backoff, reconnecting: the transport does not stop")
    func credentialsThrowOnce() async throws {
        struct Offline: Error {}
        let harness = SupervisorHarness(policy: .fixed(.seconds(10)))
        let first = try await harness.accept()
        harness.auth.failCredentials(with: Offline())
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        try await harness.waitFor(.reconnecting(attempt: 2, delay: .seconds(10)))
        #expect(harness.links.stopped == nil)
        harness.auth.failCredentials(with: nil)
        try await harness.clock.waitForSleeper(sleeping: .seconds(10))
        harness.clock.advance(by: .seconds(10))
        _ = try await harness.accept()
        try await waitUntil("connected again") { harness.recordedStates.filter { $0 == .connected }.count == 2 }
        #expect(harness.links.stopped == nil)
        #expect(harness.auth.credentialRequests == [false, false, false])
        await harness.stop()
    }

    @Test("signed out before an attempt: the supervisor stops with signedOut and opens nothing")
    func signedOut() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(1)))
        let first = try await harness.accept()
        harness.auth.setSignedIn(false)
        first.failTransport()
        try await harness.clock.waitForSleeper(sleeping: .seconds(1))
        harness.clock.advance(by: .seconds(1))
        try await waitUntil("the supervisor to stop") { harness.links.stopped != nil }
        #expect(harness.links.stopped == .signedOut)
        #expect(harness.server.requests.count == 1)
        await harness.stop()
    }

    @Test("the policy's attempt limit stops the supervisor with reconnectAttemptsExhausted")
    func attemptLimit() async throws {
        let harness = SupervisorHarness(policy: .fixed(.seconds(1), maxAttempts: 2))
        let first = try await harness.accept()
        harness.server.refuseNextConnections(5)
        first.failTransport()
        for _ in 0..<2 {
            try await harness.clock.waitForSleeper(sleeping: .seconds(1))
            harness.clock.advance(by: .seconds(1))
        }
        try await waitUntil("the supervisor to stop") { harness.links.stopped != nil }
        #expect(harness.links.stopped == .failed(.reconnectAttemptsExhausted(2)))
        await harness.stop()
    }

    @Test("nothing wanted: no connection, idle; wanted again: a connection at once")
    func demand() async throws {
        let harness = SupervisorHarness()
        let first = try await harness.accept()
        harness.links.wanted = false
        first.closeFromServer(code: 1000)
        try await waitUntil("idle again") { harness.recordedStates.filter { $0 == .idle }.count == 2 }
        #expect(!harness.recordedStates.contains { if case .reconnecting = $0 { true } else { false } })
        #expect(harness.clock.sleeperCount == 0, "idle means asleep: no backoff timer")
        #expect(harness.server.requests.count == 1)
        harness.links.wanted = true
        harness.request(.demandChanged)
        _ = try await harness.accept()
        await harness.stop()
    }
}
