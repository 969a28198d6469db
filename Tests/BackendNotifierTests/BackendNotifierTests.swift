import CoreMetrics
import Foundation
import Logging
import MetricsTestKit
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// Sample payloads, as the backend sends them on each transport for the same domain event.
enum Samples {
    static let timestamp = "2026-11-22T05:00:00.000Z"
    /// A distinct timestamp per event (second `second` of the sample minute).
    static func stamp(_ second: Int) -> String { "2026-11-22T05:00:\(second < 10 ? "0" : "")\(second).000Z" }
    static func presenceChannel(online: Bool, group: String = "g-1", at second: Int? = nil) -> String {
        let stamped = second.map(Self.stamp) ?? Self.timestamp
        return
            #"{"eventType":"device/presenceChanged","timestamp":"\#(stamped)","orgId":"o-1","siteId":"\#(group)","thingName":"t-1","derivant":"X1","mac":"AA:BB","online":\#(online)}"#
    }
    static func presenceLegacy(online: Bool, group: String = "g-1", at second: Int? = nil) -> String {
        let stamped = second.map(Self.stamp) ?? Self.timestamp
        return
            #"{"mac":"AA:BB","derivant":"X1","online":\#(online),"recording":null,"fwUpdateState":null,"thingName":"t-1","deviceGroupID":"\#(group)","orgId":"o-1","siteId":"\#(group)","eventType":"device/presenceChanged","timestamp":"\#(stamped)"}"#
    }
    static let firmwareChannel =
        #"{"eventType":"device/firmwareUpdated","timestamp":"\#(timestamp)","orgId":"o-1","siteId":"g-1","thingName":"t-1","derivant":"X1","mac":"AA:BB","fwUpdateState":3}"#
    static let planChannel = #"{"eventType":"organization/planChanged","timestamp":"\#(timestamp)","orgId":"o-1","isFreePlan":true}"#
    static let planLegacy =
        #"{"orgId":"o-1","licensePhase":null,"isFreePlan":true,"AIControlSetting":null,"eventType":"organization/planChanged","timestamp":"\#(timestamp)"}"#
    static let revoke =
        #"{"eventType":"user/tokenRevoked","timestamp":"\#(timestamp)","userId":"u-1","revokedAt":"\#(timestamp)","reason":"PASSWORD_CHANGED","requestId":"r-1"}"#
}

struct NotifierHarness {
    let clock = ManualClock()
    let metrics = TestMetrics()
    let transport: ScriptedTransport
    let notifier: BackendNotifier

    init(
        dialect: TransportDialect = .appSyncChannels, filter: any DeviceEventFilter = AllowAllDeviceEvents(),
        configure: (inout NotifierConfiguration) -> Void = { _ in }
    ) {
        var configuration = NotifierConfiguration()
        configure(&configuration)
        transport = ScriptedTransport(dialect: dialect)
        let clock = self.clock
        notifier = BackendNotifier(
            transport: transport, userId: "u-1", organizationId: "o-1", configuration: configuration, filter: filter, clock: clock,
            wallClock: WallClock { Date(timeIntervalSince1970: 1_700_000_000 + Double(clock.now.offset.components.seconds)) },
            metricsFactory: metrics)
    }

    static func channel(_ suffix: String) -> @Sendable (SubscriptionRequest) -> Bool {
        { $0 == .channel("vortex-app/user/u-1/\(suffix)") }
    }

    static func operation(_ field: String) -> @Sendable (SubscriptionRequest) -> Bool {
        { request in
            if case .graphQL(let operation) = request.topic { return operation.query.contains(field) }
            return false
        }
    }
}

@Suite("BackendNotifier")
struct BackendNotifierTests {
    @Test("AppSync: one device/* subscription feeds the three device streams and the merged one, routed by eventType")
    func appSyncDeviceRouting() async throws {
        let harness = NotifierHarness()
        let presence = ValueProbe(await harness.notifier.devicePresenceValues())
        let firmware = ValueProbe(await harness.notifier.deviceFirmwareValues())
        let merged = ValueProbe(await harness.notifier.deviceValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        upstream.send(.live)
        upstream.send(json: Samples.presenceChannel(online: false))
        upstream.send(json: Samples.firmwareChannel)
        let first = try await presence.next()
        #expect(first.online == false && first.mac == "AA:BB" && first.siteId == "g-1" && first.deviceGroupID == nil)
        #expect(try await firmware.next().fwUpdateState == 3)
        let mergedPresence = try await merged.next()
        #expect(
            mergedPresence.online == false && mergedPresence.deviceGroupID == "g-1" && mergedPresence.eventType == "device/presenceChanged")
        #expect(try await merged.next().fwUpdateState == 3)
        #expect(harness.transport.subscriptions.count == 1)
        #expect(presence.received.count == 1)
    }

    @Test("GraphQL: a merged DeviceStateOutput is delivered once to deviceValues() and split for the nine-method API")
    func graphQLSplitting() async throws {
        let harness = NotifierHarness(dialect: .graphQL)
        let presence = ValueProbe(await harness.notifier.devicePresenceValues())
        let recording = ValueProbe(await harness.notifier.deviceRecordingValues())
        let merged = ValueProbe(await harness.notifier.deviceValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        guard case .graphQL(let operation) = upstream.request.topic else { Issue.record("expected GraphQL"); return }
        // The default document: only the documented DeviceStateOutput fields, no arguments (the server scopes by user).
        #expect(
            operation.query
                == "subscription { subscribeDeviceState { mac derivant online recording fwUpdateState thingName deviceGroupID } }")
        #expect(operation.variablesJSON == nil)
        // A legacy event without eventType that carries two fields splits into two nine-kind events.
        upstream.send(json: #"{"mac":"AA:BB","online":true,"recording":true,"deviceGroupID":"g-1"}"#)
        #expect(try await presence.next().online == true)
        #expect(try await recording.next().recording == true)
        let value = try await merged.next()
        #expect(value.online == true && value.recording == true)
        // A sentinel behind it on the same upstream: once it arrives, everything before it has been delivered.
        upstream.send(json: #"{"mac":"CC:DD","online":false,"deviceGroupID":"g-1"}"#)
        #expect(try await merged.next().mac == "CC:DD")
        #expect(merged.received.map(\.mac) == ["AA:BB", "CC:DD"], "the merged value is delivered once")
        #expect(try await presence.next().mac == "CC:DD")
        #expect(recording.received.count == 1)
    }

    @Test("parity: the same domain event gives identical values on both transports, on both APIs")
    func parityAcrossTransports() async throws {
        func collect(
            _ dialect: TransportDialect, device: String, organization: String
        )
            async throws -> (DevicePresenceOutput, DeviceStateOutput, PlanStateOutput, OrganizationStateOutput)
        {
            let harness = NotifierHarness(dialect: dialect)
            let presence = ValueProbe(await harness.notifier.devicePresenceValues())
            let merged = ValueProbe(await harness.notifier.deviceValues())
            let plan = ValueProbe(await harness.notifier.planValues())
            let organizationMerged = ValueProbe(await harness.notifier.organizationValues())
            let deviceMatch = dialect == .graphQL ? NotifierHarness.operation("subscribeDeviceState") : NotifierHarness.channel("device/*")
            let organizationMatch =
                dialect == .graphQL ? NotifierHarness.operation("subscribeOrganizationState") : NotifierHarness.channel("organization/*")
            try await harness.transport.waitForSubscription(where: deviceMatch).send(json: device)
            try await harness.transport.waitForSubscription(where: organizationMatch).send(json: organization)
            return (try await presence.next(), try await merged.next(), try await plan.next(), try await organizationMerged.next())
        }
        let appSync = try await collect(.appSyncChannels, device: Samples.presenceChannel(online: true), organization: Samples.planChannel)
        let graphQL = try await collect(.graphQL, device: Samples.presenceLegacy(online: true), organization: Samples.planLegacy)
        #expect(appSync.0 == graphQL.0)
        #expect(appSync.1 == graphQL.1)
        #expect(appSync.2 == graphQL.2)
        #expect(appSync.3 == graphQL.3)
    }

    @Test("many observers share one upstream, which ends when the last observer cancels")
    func sharedUpstreamAndRelease() async throws {
        let harness = NotifierHarness()
        let first = ValueProbe(await harness.notifier.revokeValues())
        let second = ValueProbe(await harness.notifier.revokeValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("tokenRevoked"))
        upstream.send(json: Samples.revoke)
        #expect(try await first.next().reason == .passwordChanged)
        #expect(try await second.next().userId == "u-1")
        #expect(harness.transport.subscriptions.count == 1)
        first.cancel()
        try await withTestTimeout(5, "the first observer to be gone") {
            while await harness.notifier.hubs.revoke.observerCount > 1 { try await TestTime.pollPause() }
        }
        // The upstream still delivers to the remaining observer: it was not cancelled.
        upstream.send(json: Samples.revoke)
        #expect(try await second.next().userId == "u-1")
        #expect(!upstream.isCancelled)
        second.cancel()
        try await withTestTimeout(5, "the upstream to be cancelled") {
            while !upstream.isCancelled { try await TestTime.pollPause() }
        }
    }

    @Test("a slow observer's bounded buffer drops the oldest values and counts them")
    func boundedBuffers() async throws {
        let harness = NotifierHarness { $0.bufferPolicy = ObserverBufferPolicy(limit: 2, overflow: .dropOldest) }
        let stream = await harness.notifier.planValues()
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        for index in 0..<5 {
            upstream.send(json: #"{"eventType":"organization/planChanged","timestamp":"\#(Samples.timestamp)","orgId":"o-\#(index)"}"#)
        }
        try await withTestTimeout(5, "five deliveries") {
            while await harness.notifier.statistics().streams["plan"]?.delivered ?? 0 < 5 { try await TestTime.pollPause() }
        }
        #expect(await harness.notifier.statistics().streams["plan"]?.dropped == 3)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()?.orgId == "o-3")
        #expect(await iterator.next()?.orgId == "o-4")
        #expect(harness.metrics.counterTotal(label: "vortex_realtime_buffer_drops_total") == 3)
    }

    @Test("undecodable events are dropped, counted and logged; the stream goes on")
    func decodingTolerance() async throws {
        let harness = NotifierHarness()
        let revokes = ValueProbe(await harness.notifier.revokeValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("tokenRevoked"))
        upstream.send(json: #"{"eventType":"user/tokenRevoked","reason":"PASSWORD_CHANGED"}"#)
        upstream.send(json: "not json")
        upstream.send(
            json:
                #"{"eventType":"user/tokenRevoked","timestamp":"\#(Samples.timestamp)","userId":"u-1","revokedAt":"x","reason":"SOMETHING_NEW","extra":1}"#
        )
        let value = try await revokes.next()
        #expect(value.reason == .unknown("SOMETHING_NEW"))
        #expect(await harness.notifier.statistics().decodeFailures == 2)
        #expect(harness.metrics.counterTotal(label: "vortex_realtime_decode_failures_total") == 2)
        #expect(harness.metrics.counterTotal(label: "vortex_realtime_events_delivered_total") == 1)
    }

    @Test("per-stream metrics exist only when metrics go somewhere: swift-metrics' no-op factory costs no event anything")
    func streamMetricsOnlyWhenMeasured() {
        #expect(NotifierMetrics(factory: NOOPMetricsHandler.instance).stream("devicePresence") == nil)
        #expect(NotifierMetrics(factory: TestMetrics()).stream("devicePresence") != nil)
    }

    @Test("isSignedIn follows the user given at creation, then each identity update")
    func signedInFollowsIdentity() async {
        let notifier = BackendNotifier(transport: ScriptedTransport(dialect: .appSyncChannels))
        #expect(!notifier.isSignedIn)
        await notifier.update(userId: "u-1", organizationId: "o-1")
        #expect(notifier.isSignedIn)
        await notifier.update(userId: nil, organizationId: nil)
        #expect(!notifier.isSignedIn)
        #expect(BackendNotifier(transport: ScriptedTransport(dialect: .graphQL), userId: "u-2").isSignedIn)
    }

    @Test("identityChanges gives the current identity, then each new one (not a repeat), and ends at shutdown")
    func identityChangesFollowUpdates() async throws {
        let notifier = BackendNotifier(transport: ScriptedTransport(dialect: .appSyncChannels), userId: "u-1", organizationId: "o-1")
        var identities = notifier.identityChanges().makeAsyncIterator()
        #expect(await identities.next() == NotifierIdentity(userId: "u-1", organizationId: "o-1"))
        await notifier.update(userId: "u-1", organizationId: "o-1")
        await notifier.update(userId: "u-2", organizationId: "o-2")
        #expect(await identities.next() == NotifierIdentity(userId: "u-2", organizationId: "o-2"))
        await notifier.update(userId: nil, organizationId: nil)
        #expect(await identities.next() == NotifierIdentity(userId: nil, organizationId: nil))
        let untilShutdown = notifier.identityChanges()
        await notifier.shutdown()
        let afterShutdown = try await withTestTimeout(5, "the identities to end") {
            var seen: [NotifierIdentity] = []
            for await identity in untilShutdown { seen.append(identity) }
            return seen
        }
        #expect(afterShutdown == [NotifierIdentity(userId: nil, organizationId: nil)], "the last identity, then the end")
    }

    @Test("the device-group filter drops other groups' device events on both APIs")
    func filterHook() async throws {
        let harness = NotifierHarness(filter: OnlyGroupOne())
        let presence = ValueProbe(await harness.notifier.devicePresenceValues())
        let merged = ValueProbe(await harness.notifier.deviceValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        upstream.send(json: Samples.presenceChannel(online: true, group: "g-2"))
        upstream.send(json: Samples.presenceChannel(online: false, group: "g-1"))
        #expect(try await presence.next().siteId == "g-1")
        #expect(try await merged.next().siteId == "g-1")
        #expect(presence.received.count == 1)
    }

    @Test("the device-group filter drops other groups' device events when only the merged API observes them")
    func filterHookMergedOnly() async throws {
        let harness = NotifierHarness(filter: OnlyGroupOne())
        let merged = ValueProbe(await harness.notifier.deviceValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        upstream.send(json: Samples.presenceChannel(online: true, group: "g-2"))
        upstream.send(json: Samples.presenceChannel(online: false, group: "g-1"))
        let value = try await merged.next()
        #expect(value.siteId == "g-1" && value.online == false)
        #expect(merged.received.count == 1)
    }

    @Test("GraphQL: the device-group filter drops other groups' legacy device events on both APIs")
    func filterHookGraphQL() async throws {
        let harness = NotifierHarness(dialect: .graphQL, filter: OnlyGroupOne())
        let presence = ValueProbe(await harness.notifier.devicePresenceValues())
        let merged = ValueProbe(await harness.notifier.deviceValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        upstream.send(json: #"{"mac":"AA:BB","online":true,"deviceGroupID":"g-2"}"#)
        upstream.send(json: #"{"mac":"CC:DD","online":false,"deviceGroupID":"g-1"}"#)
        #expect(try await merged.next().mac == "CC:DD")
        #expect(try await presence.next().mac == "CC:DD")
        #expect(merged.received.count == 1 && presence.received.count == 1)
    }

    /// `mergedOnly`: only `deviceValues()` observes, so device events take the router's merged path.
    @Test(
        "a field this version does not know is logged at debug level, naming it; an event without one logs nothing",
        arguments: [false, true])
    func unknownFieldsLogged(mergedOnly: Bool) async throws {
        let lines = CapturedLog()
        let logger = lines.logger(level: .debug)
        let transport = ScriptedTransport(dialect: .appSyncChannels)
        let notifier = BackendNotifier(transport: transport, userId: "u-1", organizationId: "o-1", logger: logger)
        let next: @Sendable () async throws -> Void
        if mergedOnly {
            let merged = ValueProbe(await notifier.deviceValues())
            next = { _ = try await merged.next() }
        } else {
            let presence = ValueProbe(await notifier.devicePresenceValues())
            next = { _ = try await presence.next() }
        }
        let upstream = try await transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        upstream.send(json: Samples.presenceChannel(online: true, group: "g-1"))
        try await next()
        #expect(lines.matching("does not know").isEmpty)
        let known = Samples.presenceChannel(online: false, group: "g-1")
        upstream.send(json: String(known.dropLast()) + #","batteryLevel":80}"#)
        try await next()
        let logged = lines.matching("does not know")
        #expect(logged.count == 1)
        #expect(logged.first?.contains("batteryLevel") == true)
    }

    @Test("identity change: unsubscribe, disconnect, resubscribe with the new user; observers keep their streams")
    func identityChange() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let roles = ValueProbe(await harness.notifier.roleValues())
        let first = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        await harness.notifier.update(userId: "u-2", organizationId: "o-1")
        #expect(harness.transport.disconnectCount == 1)
        let second = try await harness.transport.waitForSubscription(after: first.index) {
            $0 == .channel("vortex-app/user/u-2/roleChanged")
        }
        second.send(.live)
        second.send(json: #"{"eventType":"user/roleChanged","timestamp":"\#(Samples.timestamp)","reason":"promoted"}"#)
        #expect(try await roles.next().reason == "promoted")
        await harness.notifier.update(userId: nil, organizationId: nil)
        #expect(harness.transport.activeSubscriptions.allSatisfy { $0.index < second.index } || second.isCancelled)
        try await withTestTimeout(5, "signedOut") {
            while !events.received.contains(.signedOut) { try await TestTime.pollPause() }
        }
        #expect(!(await harness.notifier.isConnectedUpstream))
    }

    @Test("background: the connection closes after the grace delay; foreground resubscribes and reports the gap")
    func backgroundForeground() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let plans = ValueProbe(await harness.notifier.planValues())
        let first = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("organization/*"))
        await harness.notifier.enterBackground()
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(10))
        await harness.notifier.enterForeground()
        #expect(!(await harness.notifier.isSuspended))
        #expect(harness.transport.disconnectCount == 0)
        // The connection was kept: the transport is asked to check it at once.
        try await withTestTimeout(5, "verifyConnection") {
            while harness.transport.verifyConnectionCount < 1 { try await TestTime.pollPause() }
        }
        await harness.notifier.enterBackground()
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(30))
        // `suspended` is reported once the transport is disconnected.
        try await withTestTimeout(5, "suspension") {
            while !events.received.contains(.suspended) { try await TestTime.pollPause() }
        }
        #expect(await harness.notifier.isSuspended)
        #expect(await harness.notifier.connectionState == .suspended)
        #expect(harness.transport.disconnectCount == 1)
        harness.clock.advance(by: .seconds(20))
        await harness.notifier.enterForeground()
        let second = try await harness.transport.waitForSubscription(after: first.index, where: NotifierHarness.channel("organization/*"))
        second.send(.live)
        second.send(json: Samples.planChannel)
        #expect(try await plans.next().isFreePlan == true)
        // 20 s suspended, and the 2 s loss margin before it (what was on its way when the upstream stopped).
        try await withTestTimeout(5, "a resumed event") {
            while !events.received.contains(where: { if case .resumed(_, _, let gap) = $0 { gap.duration == 22 } else { false } }) {
                try await TestTime.pollPause()
            }
        }
        #expect(events.received.filter { $0 == .suspended }.count == 1)
        #expect(harness.transport.verifyConnectionCount == 1, "a resumption after a suspension reconnects; it verifies nothing")
    }

    @Test("switchTransport: subscribes on the new transport, cuts over when live, disconnects the old; streams never end")
    func switchTransport() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        let presence = ValueProbe(await harness.notifier.devicePresenceValues())
        let old = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        old.send(json: Samples.presenceChannel(online: true, at: 1))
        #expect(try await presence.next().timestamp == Samples.stamp(1))
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let switching = Task { try await harness.notifier.switchTransport(to: graphQL) }
        let new = try await graphQL.waitForSubscription(where: NotifierHarness.operation("subscribeDeviceState"))
        // Before the new subscription is live the old one delivers; the new one's copy of the same event is held.
        new.send(json: Samples.presenceLegacy(online: false, at: 2))
        old.send(json: Samples.presenceChannel(online: false, at: 2))
        #expect(try await presence.next().timestamp == Samples.stamp(2))
        new.send(.live)
        try await harness.clock.settleSwitch()
        try await switching.boundedValue()
        #expect(harness.transport.disconnectCount == 1)
        #expect(await harness.notifier.activeTransportName == "graphql")
        new.send(json: Samples.presenceLegacy(online: true, at: 3))
        #expect(try await presence.next().timestamp == Samples.stamp(3))
        #expect(presence.received.compactMap(\.timestamp) == [1, 2, 3].map(Samples.stamp), "each event once, in order")
        #expect(
            events.received.contains {
                if case .transportSwitched(from: "appsync", to: "graphql", let gap, .requested) = $0 { gap.duration == 2 } else { false }
            }, "the old subscription was never confirmed live: the window is the gap rule's")
        #expect(harness.metrics.counterTotal(label: "vortex_realtime_transport_switches_total") == 1)
    }

    @Test("a switch whose new transport never gets live times out and keeps the old transport")
    func switchTimeout() async throws {
        let harness = NotifierHarness { $0.switchTimeout = .seconds(5) }
        let presence = ValueProbe(await harness.notifier.devicePresenceValues())
        let old = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("device/*"))
        let graphQL = ScriptedTransport(dialect: .graphQL)
        let switching = Task { try await harness.notifier.switchTransport(to: graphQL) }
        _ = try await graphQL.waitForSubscription()
        try await harness.clock.waitForSleeper(sleeping: .seconds(5))
        harness.clock.advance(by: .seconds(5))
        await #expect(throws: RealtimeError.connectionTimedOut(.seconds(5))) { try await switching.boundedValue() }
        #expect(await harness.notifier.activeTransportName == "appsync")
        #expect(graphQL.disconnectCount == 1)
        old.send(json: Samples.presenceChannel(online: true))
        #expect(try await presence.next().online == true)
    }

    @Test("sessionExpired from the transport reaches the connection events")
    func sessionExpiredEvent() async throws {
        let harness = NotifierHarness()
        let events = ValueProbe(await harness.notifier.connectionEvents())
        _ = ValueProbe(await harness.notifier.roleValues())
        let upstream = try await harness.transport.waitForSubscription(where: NotifierHarness.channel("roleChanged"))
        upstream.finish(throwing: RealtimeError.sessionExpired("refused"))
        #expect(try await events.next() == .sessionExpired)
    }
}

/// The device-group filter of the filter tests: only group `g-1` is the user's.
private struct OnlyGroupOne: DeviceEventFilter {
    func canAccessDevice(deviceGroupID: String) -> Bool { deviceGroupID == "g-1" }
}
