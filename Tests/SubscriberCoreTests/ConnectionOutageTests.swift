import Foundation
import Testing

@testable import SubscriberCore

/// `ConnectionOutage` on its own: what each link's end leaves for `lastConnectionFailure` and `connectionLostAt`.
@Suite("ConnectionOutage")
struct ConnectionOutageTests {
    private let lastFrame = Date(timeIntervalSince1970: 1_000)
    private let now = Date(timeIntervalSince1970: 2_000)
    private let reset = WebSocketCloseInfo(code: 1006, reason: "reset")

    /// An outage after an acknowledged link was lost: its close and its last frame.
    private func afterLoss() -> ConnectionOutage {
        var outage = ConnectionOutage()
        let report = LinkReport(end: .peerClosed, acknowledged: true, lastReceived: lastFrame, close: reset)
        outage.record(report, loss: .lost(.retryable), now: now)
        return outage
    }

    @Test("an acknowledged link lost: why, with its close, and since its last frame (now, if none came)")
    func acknowledgedLoss() {
        let outage = afterLoss()
        #expect(outage.lastFailure == "closed by the server, close \(reset)")
        #expect(outage.lostAt == lastFrame)
        var silent = ConnectionOutage()
        silent.record(LinkReport(end: .pongTimeout(.seconds(5)), acknowledged: true), loss: .lost(.retryable), now: now)
        #expect(silent.lostAt == now)
    }

    @Test("a failed attempt after the loss: its failure replaces the last, the outage keeps its start")
    func failedAttempt() {
        var outage = afterLoss()
        outage.record(LinkReport(end: .openFailed("refused", authRejected: false)), loss: .lost(.retryable), now: now)
        #expect(outage.lastFailure == "open failed: refused")
        #expect(outage.lostAt == lastFrame)
    }

    @Test("a requested end clears both; a replaced link acknowledged clears the failure only; unacknowledged, nothing")
    func requestedAndReplaced() {
        var requested = afterLoss()
        requested.record(LinkReport(end: .requested, acknowledged: true), loss: .lost(.requested), now: now)
        #expect(requested == ConnectionOutage())
        var rotated = afterLoss()
        rotated.record(LinkReport(end: .rotated, lastReceived: now), loss: .replaced, now: now)
        #expect(rotated == afterLoss())
        rotated.record(LinkReport(end: .rotated, acknowledged: true, lastReceived: now), loss: .replaced, now: now)
        #expect(rotated.lastFailure == nil)
        #expect(rotated.lostAt == lastFrame)
    }
}
