import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Issue 20 item 3: a planned switch is make-before-break and reports an empty window; events both transports deliver
/// during the overlap reach the app once, in order; an unplanned switch keeps the gap rule's window.
@Suite("BackendNotifier switch")
struct NotifierSwitchTests {
    static func role(_ second: Int) -> String {
        #"{"eventType":"user/roleChanged","timestamp":"\#(Samples.stamp(second))","reason":"r\#(second)"}"#
    }

    /// A notifier on AppSync observing presence, the merged device stream and roles, both upstreams live and the
    /// transport connected; the GraphQL transport to switch to.
    struct Live {
        let harness = NotifierHarness()
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let events: ValueProbe<NotifierConnectionEvent>
        let presence: ValueProbe<DevicePresenceOutput>
        let merged: ValueProbe<DeviceStateOutput>
        let roles: ValueProbe<RoleChangeOutput>
        let oldDevice: ScriptedTransport.Subscription
        let oldRole: ScriptedTransport.Subscription

        init() async throws {
            events = ValueProbe(await harness.notifier.connectionEvents())
            presence = ValueProbe(await harness.notifier.devicePresenceValues())
            merged = ValueProbe(await harness.notifier.deviceValues())
            roles = ValueProbe(await harness.notifier.roleValues())
            oldDevice = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
            oldRole = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
            oldDevice.send(.live)
            oldRole.send(.live)
            harness.transport.setState(.connected)
            try await withTestTimeout(5, "both upstreams live") { [events] in
                while events.received.filter({ if case .live = $0 { true } else { false } }).count < 2 {
                    try await TestTime.pollPause()
                }
            }
            try await NotifierConnectionStateTests.waitFor(ValueProbe(await harness.notifier.connectionStates()), .live)
        }

        var switches: [(gap: GapWindow, reason: TransportSwitchReason)] {
            events.received.compactMap { event in
                if case .transportSwitched(from: "appsync", to: "graphql", let gap, let reason) = event { return (gap, reason) }
                return nil
            }
        }
    }

    @Test("a requested switch under traffic on both transports delivers every event once, in order, and reports an empty window")
    func plannedSwitchUnderTraffic() async throws {
        let live = try await Live()
        // 1: before the switch, on the old transport only.
        live.oldDevice.send(json: Samples.presenceChannel(online: true, at: 1))
        live.oldRole.send(json: Self.role(1))
        let switching = Task { try await live.harness.notifier.switchTransport(to: live.graphQL) }
        let newDevice = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        let newRole = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeRoleChange"))
        // 2: published before the new subscriptions existed: on the old transport only.
        live.oldDevice.send(json: Samples.presenceChannel(online: false, at: 2))
        live.oldRole.send(json: Self.role(2))
        // 3-5: on both, in either order; 6: on both, but the new transport only delivers it after it is live.
        newDevice.send(json: Samples.presenceLegacy(online: true, at: 3))
        live.oldDevice.send(json: Samples.presenceChannel(online: true, at: 3))
        live.oldDevice.send(json: Samples.presenceChannel(online: false, at: 4))
        newDevice.send(json: Samples.presenceLegacy(online: false, at: 4))
        live.oldDevice.send(json: Samples.presenceChannel(online: true, at: 5))
        live.oldDevice.send(json: Samples.presenceChannel(online: false, at: 6))
        newRole.send(json: Self.role(3))
        live.oldRole.send(json: Self.role(3))
        // The old transport has delivered 1-6 (the cut-over comes after, as on a wire where the old link is ahead).
        try await live.presence.waitForCount(6)
        try await live.roles.waitForCount(3)
        newDevice.send(json: Samples.presenceLegacy(online: true, at: 5))
        #expect(live.graphQL.subscriptions.count == 2)
        #expect(await live.harness.notifier.activeTransportName == "appsync", "no cut-over before every new subscription is live")
        newDevice.send(.live)
        newRole.send(.live)
        try await live.harness.clock.settleSwitch()
        try await switching.boundedValue()
        #expect(live.harness.transport.disconnectCount == 1)
        // After the cut-over: 6 arrives late on the new transport (a duplicate), 7 and 8 only there.
        newDevice.send(json: Samples.presenceLegacy(online: false, at: 6))
        newDevice.send(json: Samples.presenceLegacy(online: true, at: 7))
        newRole.send(json: Self.role(4))
        newDevice.send(json: Samples.presenceLegacy(online: false, at: 8))
        try await live.presence.waitForCount(8)
        try await live.merged.waitForCount(8)
        try await live.roles.waitForCount(4)

        let expected = (1...8).map(Samples.stamp)
        #expect(live.presence.received.compactMap(\.timestamp) == expected)
        #expect(live.merged.received.compactMap(\.timestamp) == expected)
        #expect(live.presence.received.map(\.online) == [true, false, true, false, true, false, true, false])
        #expect(live.roles.received.compactMap(\.reason) == ["r1", "r2", "r3", "r4"])
        #expect(live.switches.count == 1)
        #expect(live.switches.first?.gap.duration == 0)
        #expect(live.switches.first?.reason == .requested)
        #expect(!live.events.received.contains { if case .eventsLost = $0 { true } else { false } })
        #expect(!live.events.received.contains { if case .resumed = $0 { true } else { false } })
    }

    @Test("an event only the new transport received before it was live is delivered at the cut-over, not lost")
    func newOnlyEventBeforeLive() async throws {
        let live = try await Live()
        let switching = Task { try await live.harness.notifier.switchTransport(to: live.graphQL) }
        let newDevice = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        let newRole = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeRoleChange"))
        newDevice.send(json: Samples.presenceLegacy(online: true, at: 1))
        newDevice.send(.live)
        newRole.send(.live)
        try await live.harness.clock.settleSwitch()
        try await switching.boundedValue()
        #expect(try await live.presence.next().timestamp == Samples.stamp(1))
    }

    @Test("failover keeps the gap rule's window: from the safety margin before the switch to its end")
    func failoverWindow() async throws {
        let live = try await Live()
        let switching = Task { try await live.harness.notifier.switchTransport(to: live.graphQL, because: .failover("down")) }
        let newDevice = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        let newRole = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeRoleChange"))
        live.harness.clock.advance(by: .seconds(3))
        newDevice.send(.live)
        newRole.send(.live)
        try await live.harness.clock.settleSwitch()
        try await switching.boundedValue()
        try await withTestTimeout(5, "transportSwitched") { while live.switches.isEmpty { try await TestTime.pollPause() } }
        let gap = try #require(live.switches.first?.gap)
        #expect(gap.start == Date(timeIntervalSince1970: 1_700_000_000 - 2), "the safety margin before the switch began")
        #expect(gap.end >= Date(timeIntervalSince1970: 1_700_000_003), "the end of the switch")
        #expect(live.switches.first?.reason == .failover("down"))
    }

    @Test("a requested switch while the old transport reconnects reports the honest window")
    func requestedSwitchOverAReconnectingTransport() async throws {
        let live = try await Live()
        live.harness.transport.setState(.reconnecting(attempt: 1, delay: .seconds(1)))
        try await NotifierConnectionStateTests.waitFor(ValueProbe(await live.harness.notifier.connectionStates()), .reconnecting)
        let switching = Task { try await live.harness.notifier.switchTransport(to: live.graphQL) }
        let newDevice = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        let newRole = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeRoleChange"))
        newDevice.send(.live)
        newRole.send(.live)
        try await live.harness.clock.settleSwitch()
        try await switching.boundedValue()
        try await withTestTimeout(5, "transportSwitched") { while live.switches.isEmpty { try await TestTime.pollPause() } }
        #expect(live.switches.first?.gap.duration == 2)
    }

    @Test("a failover a minute into an outage reports the window from the outage's start, not from the switch's")
    func failoverWindowCoversTheOutage() async throws {
        let live = try await Live()
        let outage = Date(timeIntervalSince1970: 1_700_000_000 - 60)
        live.harness.transport.setState(.reconnecting(attempt: 5, delay: .seconds(10)), failure: "reset", lostAt: outage)
        try await NotifierConnectionStateTests.waitFor(ValueProbe(await live.harness.notifier.connectionStates()), .reconnecting)
        let switching = Task { try await live.harness.notifier.switchTransport(to: live.graphQL, because: .failover("down")) }
        let newDevice = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        let newRole = try await live.graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeRoleChange"))
        newDevice.send(.live)
        newRole.send(.live)
        try await live.harness.clock.settleSwitch()
        try await switching.boundedValue()
        try await withTestTimeout(5, "transportSwitched") { while live.switches.isEmpty { try await TestTime.pollPause() } }
        #expect(live.switches.first?.gap.start == outage.addingTimeInterval(-2), "the safety margin before the outage began")
    }
}
