import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 11: one buffer limit governs the whole path. With the limit at or above the burst, a 200k-event burst
/// arrives complete and in order through a transport buffer and an observer buffer of that limit.
@Suite("BackendNotifier burst")
struct NotifierBurstTests {
    @Test("a 200,000-event burst arrives complete and in order when the buffer limit is at or above the burst")
    func burst() async throws {
        let count = 200_000
        var configuration = NotifierConfiguration()
        configuration.bufferPolicy = ObserverBufferPolicy(limit: count, overflow: .dropOldest)
        let transport = ScriptedTransport(dialect: .appSyncChannels, bufferLimit: count)
        let notifier = BackendNotifier(transport: transport, userId: "u-1", organizationId: "o-1", configuration: configuration)
        let events = ValueProbe(await notifier.connectionEvents())
        let roles = await notifier.roleValues()
        let upstream = try await transport.waitForSubscription()
        var accepted = 0
        for index in 0..<count {
            if upstream.send(json: #"{"eventType":"user/roleChanged","timestamp":"\#(Samples.timestamp)","reason":"\#(index)"}"#) {
                accepted += 1
            }
        }
        #expect(accepted == count, "the transport's buffer dropped events")
        var expected = 0
        var outOfOrder = 0
        for await role in roles {
            if role.reason != String(expected) { outOfOrder += 1 }
            expected += 1
            if expected == count { break }
        }
        #expect(expected == count)
        #expect(outOfOrder == 0)
        #expect(await notifier.statistics().streams["role"]?.dropped == 0)
        #expect(!events.received.contains { if case .eventsLost = $0 { true } else { false } })
    }
}
