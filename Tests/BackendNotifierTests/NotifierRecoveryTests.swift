import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 10 item 1: after `sessionExpired` or `signedOut`, `update(userId:organizationId:)` restarts every observed
/// upstream, with the same or another identity; one report per episode.
@Suite("BackendNotifier recovery")
struct NotifierRecoveryTests {
    static let role = #"{"eventType":"user/roleChanged","timestamp":"\#(Samples.timestamp)","reason":"back"}"#

    @Test("sessionExpired: reported once however many streams end; update with the same identity restarts every upstream")
    func sameIdentityAfterSessionExpired() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let roles = ValueProbe(await harness.notifier.roleValues())
        let plans = ValueProbe(await harness.notifier.planValues())
        let role = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        let organization = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        harness.transport.failAll(with: RealtimeError.sessionExpired("refused twice"))
        try await withTestTimeout(5, "sessionExpired") {
            while !events.received.contains(.sessionExpired) { try await TestTime.pollPause() }
        }
        #expect(await harness.notifier.connectionState == .offline)

        await harness.notifier.update(userId: "u-1", organizationId: "o-1")
        #expect(harness.transport.disconnectCount == 1)
        let newRole = try await harness.transport.waitForSubscription(
            after: max(role.index, organization.index), where: NotifierHarness.channel("roleChanged"))
        let newOrganization = try await harness.transport.waitForSubscription(
            after: max(role.index, organization.index), where: NotifierHarness.channel("organization/*"))
        newRole.send(json: Self.role)
        newOrganization.send(json: Samples.planChannel)
        #expect(try await roles.next().reason == "back")
        #expect(try await plans.next().isFreePlan == true)
        #expect(events.received.filter { $0 == .sessionExpired }.count == 1)
        #expect(events.received.first { $0.vortexError != nil }?.vortexError == .sessionExpired)
    }

    @Test("signedOut, then sign-in as another user: every observed upstream restarts with the new identity")
    func otherIdentityAfterSignedOut() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let roles = ValueProbe(await harness.notifier.roleValues())
        let first = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        _ = ValueProbe(await harness.notifier.revokeValues())
        _ = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("tokenRevoked"))
        harness.transport.failAll(with: RealtimeError.signedOut)
        try await withTestTimeout(5, "signedOut") {
            while !events.received.contains(.signedOut) { try await TestTime.pollPause() }
        }
        let count = harness.transport.subscriptions.count
        await harness.notifier.update(userId: "u-2", organizationId: "o-2")
        let role = try await harness.transport.waitForSubscription(after: count - 1) { $0 == .channel("vortex-app/user/u-2/roleChanged") }
        _ = try await harness.transport.waitForSubscription(after: count - 1) { $0 == .channel("vortex-app/user/u-2/tokenRevoked") }
        role.send(json: Self.role)
        #expect(try await roles.next().reason == "back")
        #expect(events.received.filter { $0 == .signedOut }.count == 1)
        #expect(first.index < count)
    }

    @Test("update with an unchanged identity while everything runs does nothing")
    func unchangedIdentityIsANoOp() async throws {
        let harness = NotifierHarness()
        _ = ValueProbe(await harness.notifier.roleValues())
        _ = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        await harness.notifier.update(userId: "u-1", organizationId: "o-1")
        #expect(harness.transport.disconnectCount == 0)
        #expect(harness.transport.subscriptions.count == 1)
    }
}
