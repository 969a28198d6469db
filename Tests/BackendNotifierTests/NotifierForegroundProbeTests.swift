import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 19 item 4: returning to the foreground with the connection kept (the grace delay had not passed) checks it at
/// once: the notifier asks the transport to verify its connection (probe every link, replace a dead one).
@Suite("BackendNotifier foreground probe")
struct NotifierForegroundProbeTests {
    @Test("foreground within the grace delay verifies the kept connection; after a suspension it resubscribes instead")
    func foregroundVerifies() async throws {
        let harness = NotifierHarness()
        let plans = ValueProbe(await harness.notifier.planValues())
        let first = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        await harness.notifier.enterForeground()
        try await harness.transport.waitForVerifications(1)  // foreground without a background stay still checks the link
        await harness.notifier.enterBackground()
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(10))
        await harness.notifier.enterForeground()
        try await harness.transport.waitForVerifications(2)
        #expect(harness.transport.disconnectCount == 0)

        await harness.notifier.enterBackground()
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(30))
        try await withTestTimeout(5, "suspension") {
            while !(await harness.notifier.isSuspended) { try await TestTime.pollPause() }
        }
        await harness.notifier.enterForeground()
        _ = try await harness.transport.waitForSubscription(after: first.index, where: NotifierHarness.channel("organization/*"))
        #expect(harness.transport.verifyConnectionCount == 2, "a suspended notifier reconnects; there is nothing to verify")
        _ = plans
    }
}
