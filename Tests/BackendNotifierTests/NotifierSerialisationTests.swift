import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 10 item 2: no upstream subscribes with another identity than the current one, and identity updates,
/// observers and switches are serialised. Interleavings are forced with a transport that parks on a gate.
@Suite("BackendNotifier serialisation")
struct NotifierSerialisationTests {
    static func users(_ subscriptions: [ScriptedTransport.Subscription]) -> [String] {
        subscriptions.compactMap { subscription in
            if case .channel(let channel) = subscription.request.topic { return channel.split(separator: "/")[2].description }
            return nil
        }
    }

    @Test("an observer registering while update() is disconnecting subscribes with the new identity, after the disconnect")
    func observerDuringIdentityUpdate() async throws {
        let transport = ParkingTransport(dialect: .appSyncChannels)
        let notifier = BackendNotifier(transport: transport, userId: "u-1", organizationId: "o-1")
        _ = ValueProbe(await notifier.planValues())
        let first = try await transport.scripted.waitForSubscription()
        transport.park(.disconnect)
        let updating = Task { await notifier.update(userId: "u-2", organizationId: "o-2") }
        try await transport.waitUntilParked(.disconnect)
        // The observer arrives in the window where the old code still held u-1.
        let roles = ValueProbe(await notifier.roleValues())
        // Decided on the actor as the observer arrived: no run was started (a pump would subscribe a moment later).
        #expect(await notifier.machine.runs.isEmpty, "nothing may start while the update is disconnecting")
        #expect(transport.scripted.subscriptions.count == 1, "nothing may subscribe while the update is disconnecting")
        transport.release(.disconnect)
        try await updating.boundedValue()
        let role = try await transport.scripted.waitForSubscription(after: first.index) {
            $0 == .channel("vortex-app/user/u-2/roleChanged")
        }
        _ = try await transport.scripted.waitForSubscription(after: first.index) { $0 == .channel("vortex-app/user/u-2/organization/*") }
        #expect(Self.users(Array(transport.scripted.subscriptions.dropFirst())).allSatisfy { $0 == "u-2" })
        role.send(json: NotifierRecoveryTests.role)
        #expect(try await roles.next().reason == "back")
    }

    @Test("an identity update during a preparing switch gives it up, then subscribes with the new identity on the old transport")
    func updateGivesUpSwitch() async throws {
        let clock = ManualClock()
        var configuration = NotifierConfiguration()
        configuration.graphQLOperations[.role] = GraphQLOperation(
            query: "subscription($userId: String) { subscribeRoleChange(userId: $userId) { reason } }")
        let appSync = ScriptedTransport(dialect: .appSyncChannels)
        let notifier = BackendNotifier(transport: appSync, userId: "u-1", organizationId: "o-1", configuration: configuration, clock: clock)
        _ = ValueProbe(await notifier.roleValues())
        let first = try await appSync.waitForSubscription()
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let switching = Task { try await notifier.switchTransport(to: graphQL) }
        let prepared = try await graphQL.waitForSubscription()
        guard case .graphQL(let before) = prepared.request.topic else { Issue.record("expected GraphQL"); return }
        #expect(before.variablesJSON == #"{"userId":"u-1"}"#)
        // The new subscription carries the old identity: the update does not wait for the new transport to be live.
        let updating = Task { await notifier.update(userId: "u-2", organizationId: "o-2") }
        await #expect(throws: RealtimeError.disconnected) { try await switching.boundedValue() }
        try await updating.boundedValue()
        #expect(await notifier.activeTransportName == "appsync")
        #expect(graphQL.disconnectCount == 1)
        _ = try await appSync.waitForSubscription(after: first.index) { $0 == .channel("vortex-app/user/u-2/roleChanged") }
        #expect(graphQL.subscriptions.count == 1)
    }

    @Test("an observer registering during a switch starts on the new transport when the switch ends")
    func observerDuringSwitch() async throws {
        let harness = NotifierHarness()
        _ = ValueProbe(await harness.notifier.roleValues())
        _ = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let switching = Task { try await harness.notifier.switchTransport(to: graphQL) }
        let prepared = try await graphQL.waitForSubscription()
        let plans = ValueProbe(await harness.notifier.planValues())
        #expect(await harness.notifier.machine.runs[.organization] == nil, "nothing starts during the switch")
        #expect(harness.transport.subscriptions.count == 1, "the old transport gets nothing new during the switch")
        prepared.send(.live)
        try await harness.clock.settleSwitch()
        try await switching.boundedValue()
        let organization = try await graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeOrganizationState"))
        organization.send(json: Samples.planLegacy)
        #expect(try await plans.next().isFreePlan == true)
    }
}
