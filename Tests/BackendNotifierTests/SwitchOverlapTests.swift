import Foundation
import MetricsTestKit
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// The overlap of a make-before-break switch on its own: the old side records, the new side holds, the cut-over
/// delivers the held events minus duplicates; and the event identity it compares.
@Suite("SwitchOverlap")
struct SwitchOverlapTests {
    struct Fixture {
        /// Kept: a released notifier ends its streams.
        let notifier: BackendNotifier
        let hubs: NotifierHubs
        let router: EventRouter
        let events: StreamHub<NotifierConnectionEvent>

        /// The router and streams of a notifier that observes nothing (so nothing else delivers to them).
        init(wallClock: WallClock = .system) async {
            notifier = BackendNotifier(
                transport: ScriptedTransport(dialect: .appSyncChannels), userId: "u-1", organizationId: "o-1", wallClock: wallClock)
            hubs = await notifier.hubs
            router = await notifier.router
            events = await notifier.events
        }

        func overlap(_ upstream: Upstream) -> SwitchOverlap {
            SwitchOverlap(
                upstream: upstream, router: router, events: events, old: SwitchOverlap.Side(dialect: .appSyncChannels, name: "appsync"),
                new: SwitchOverlap.Side(dialect: .graphQL, name: "graphql"))
        }
    }

    static func payload(_ json: String) -> SubscriptionEvent { .payload(RealtimePayload(json: Data(json.utf8))) }
    static func role(_ second: Int) -> SubscriptionEvent { payload(NotifierSwitchTests.role(second)) }

    @Test("the old side delivers and records; the new side holds; the cut-over delivers what only the new side had")
    func cutOverDeliversTheDifference() async throws {
        let fixture = await Fixture()
        let roles = ValueProbe(fixture.hubs.role.makeStream {})
        let overlap = fixture.overlap(.role)
        overlap.fromOld(Self.role(1))
        #expect(overlap.fromNew(Self.role(1)))
        #expect(overlap.fromNew(Self.role(2)))
        overlap.fromOld(Self.role(2))
        #expect(overlap.fromNew(Self.role(3)))
        try await roles.waitForCount(2)
        overlap.cutOver()
        overlap.fromOld(Self.role(4))  // the old side is closed now
        try await roles.waitForCount(3)
        // Nothing recorded is left to match: the new side delivers directly from now on.
        #expect(!overlap.fromNew(Self.role(5)))
        try await roles.waitForCount(4)
        #expect(roles.received.compactMap(\.reason) == ["r1", "r2", "r3", "r5"])
    }

    @Test("after the cut-over, a late copy of what the old side delivered is dropped until the record is used up")
    func lateDuplicates() async throws {
        let fixture = await Fixture()
        let roles = ValueProbe(fixture.hubs.role.makeStream {})
        let overlap = fixture.overlap(.role)
        overlap.fromOld(Self.role(1))
        overlap.fromOld(Self.role(2))
        overlap.cutOver()
        #expect(overlap.fromNew(Self.role(1)))
        #expect(!overlap.fromNew(Self.role(2)), "the record is used up: the overlap is over")
        #expect(!overlap.fromNew(Self.role(3)))
        try await roles.waitForCount(3)
        #expect(roles.received.compactMap(\.reason) == ["r1", "r2", "r3"])
    }

    @Test("an abandoned switch's overlap drops what the new side held; the old side's events keep going through the router")
    func endedOverlap() async throws {
        let fixture = await Fixture()
        let roles = ValueProbe(fixture.hubs.role.makeStream {})
        let overlap = fixture.overlap(.role)
        #expect(overlap.fromNew(Self.role(1)))
        overlap.end()
        // The old run's pump read its delivery before the notifier reopened it: the event is still delivered.
        overlap.fromOld(Self.role(2))
        // The new run is being stopped: what it still reads would be a copy of the old run's.
        #expect(overlap.fromNew(Self.role(3)))
        try await roles.waitForCount(1)
        #expect(roles.received.compactMap(\.reason) == ["r2"])
    }

    @Test("after a cut-over, an ended overlap drops the old run's late events and delivers the new run's")
    func endedAfterCutOver() async throws {
        let fixture = await Fixture()
        let roles = ValueProbe(fixture.hubs.role.makeStream {})
        let overlap = fixture.overlap(.role)
        overlap.cutOver()
        overlap.end()
        overlap.fromOld(Self.role(1))
        #expect(!overlap.fromNew(Self.role(2)))
        try await roles.waitForCount(1)
        #expect(roles.received.compactMap(\.reason) == ["r2"])
    }

    @Test("the new side holds at most heldLimit events; the overflow is reported as lost at the cut-over")
    func heldIsBounded() async throws {
        let fixture = await Fixture()
        let events = ValueProbe(fixture.events.makeStream {})
        let overlap = fixture.overlap(.role)
        for index in 0..<(SwitchOverlap.heldLimit + 3) {
            _ = overlap.fromNew(Self.payload(#"{"eventType":"user/roleChanged","reason":"\#(index)"}"#))
        }
        overlap.cutOver()
        let event = try await events.next()
        guard case .eventsLost(let stream, let transport, let loss) = event else {
            Issue.record("expected eventsLost, got \(event)"); return
        }
        #expect(stream == "role" && transport == "graphql" && loss.count == 3 && loss.reason == .bufferOverflow)
    }

    @Test("held events dropped over the limit are reported over a window from the overlap's beginning, not the cut-over")
    func heldDropsReachBackToTheOverlapsBeginning() async throws {
        let now = Locked(Date(timeIntervalSince1970: 1_000))
        func at(_ second: Double) { now.withLock { $0 = Date(timeIntervalSince1970: second) } }
        let fixture = await Fixture(wallClock: WallClock { now.withLock { $0 } })
        let events = ValueProbe(fixture.events.makeStream {})
        let overlap = fixture.overlap(.role)  // begins at 1000 s
        at(1_010)  // the first held events, dropped later to make room, arrive
        for index in 0..<(SwitchOverlap.heldLimit + 3) {
            _ = overlap.fromNew(Self.payload(#"{"eventType":"user/roleChanged","reason":"\#(index)"}"#))
        }
        at(1_100)
        overlap.cutOver()
        let event = try await events.next()
        guard case .eventsLost(_, _, let loss) = event else {
            Issue.record("expected eventsLost, got \(event)"); return
        }
        #expect(loss.count == 3 && loss.window.start <= Date(timeIntervalSince1970: 1_010), "window \(loss.window)")
        // The default loss margin (2 s) before the overlap's beginning, to the cut-over.
        #expect(loss.window == GapWindow(start: Date(timeIntervalSince1970: 998), end: Date(timeIntervalSince1970: 1_100)))
    }

    @Test("losses and resumptions of either side reach the app, named after their transport, before and after the cut-over")
    func lossesOfBothSides() async throws {
        let fixture = await Fixture()
        let events = ValueProbe(fixture.events.makeStream {})
        let overlap = fixture.overlap(.role)
        let window = GapWindow(start: Date(timeIntervalSince1970: 10), end: Date(timeIntervalSince1970: 20))
        let loss = LossReport(count: 2, window: window, reason: .bufferOverflow)
        overlap.fromOld(.lost(loss))
        overlap.fromOld(.resumed(gap: window))
        #expect(overlap.fromNew(.lost(loss)), "held until the cut-over")
        overlap.fromOld(Self.role(1))
        overlap.cutOver()
        #expect(overlap.fromNew(.resumed(gap: window)), "the record still waits for its copy")
        #expect(overlap.fromNew(.lost(loss)))
        try await events.waitForCount(5)
        #expect(
            events.received == [
                .eventsLost(stream: "role", transport: "appsync", loss: loss),
                .resumed(stream: "role", transport: "appsync", gap: window),
                .eventsLost(stream: "role", transport: "graphql", loss: loss),
                .resumed(stream: "role", transport: "graphql", gap: window),
                .eventsLost(stream: "role", transport: "graphql", loss: loss),
            ])
    }

    @Test("a delivery recorded with the same timestamp is matched before one recorded without")
    func ledgerPrefersTheSameInstant() {
        let encoder = EventIdentity.makeEncoder()
        func identity(_ timestamp: String?) -> EventIdentity {
            EventIdentity(
                .roleChanged(RoleChangeOutput(eventType: "user/roleChanged", timestamp: timestamp, reason: "a")), encoder: encoder)
        }
        var ledger = DeliveredLedger(limit: 8)
        ledger.record([identity(nil)])
        ledger.record([identity("t2")])
        let exact = ledger.consume([identity("t2")])
        #expect(exact)
        // What is left is the delivery without a timestamp, which may have been any instant's.
        let other = ledger.consume([identity("t3")])
        #expect(other)
        #expect(ledger.isEmpty)
    }

    @Test("the ledger is a bounded multiset: each delivery matches once, a payload matches only if all of it was delivered")
    func ledger() {
        let encoder = EventIdentity.makeEncoder()
        func identity(_ reason: String) -> EventIdentity {
            EventIdentity(.roleChanged(RoleChangeOutput(eventType: "user/roleChanged", timestamp: "t", reason: reason)), encoder: encoder)
        }
        var ledger = DeliveredLedger(limit: 3)
        ledger.record([identity("a")])
        ledger.record([identity("a")])
        let matched1 = ledger.consume([identity("a")])
        #expect(matched1)
        let matched2 = ledger.consume([identity("a")])
        #expect(matched2)
        let matched3 = ledger.consume([identity("a")])
        #expect(!matched3)
        #expect(ledger.isEmpty)
        ledger.record([identity("b")])
        let matched4 = ledger.consume([identity("b"), identity("c")])
        #expect(!matched4, "part of it was never delivered")
        let matched5 = ledger.consume([identity("b")])
        #expect(matched5, "and nothing was consumed by the failed match")
        let matched6 = ledger.consume([])
        #expect(!matched6, "an unreadable payload matches nothing")
        for reason in ["1", "2", "3", "4", "5"] { ledger.record([identity(reason)]) }
        let matched7 = ledger.consume([identity("1")])
        #expect(!matched7, "the oldest beyond the limit are forgotten")
        let matched8 = ledger.consume([identity("2")])
        #expect(!matched8)
        for reason in ["3", "4", "5"] {
            let matched = ledger.consume([identity(reason)])
            #expect(matched)
        }
        #expect(ledger.isEmpty)
    }

    @Test("identity: the same domain event on AppSync and on GraphQL is one event, for every kind; any other field makes another")
    func identityAcrossTransports() async {
        let router = await Fixture().router
        let encoder = EventIdentity.makeEncoder()
        func identities(_ json: String, _ upstream: Upstream, _ dialect: TransportDialect) -> [EventIdentity] {
            router.normalisedEvents(of: RealtimePayload(json: Data(json.utf8)), from: upstream, dialect: dialect).map {
                EventIdentity($0, encoder: encoder)
            }
        }
        let stamp = Samples.stamp(7)
        let pairs: [(Upstream, String, String)] = [
            (.device, Samples.presenceChannel(online: true, at: 7), Samples.presenceLegacy(online: true, at: 7)),
            (
                .device,
                #"{"eventType":"device/firmwareUpdated","timestamp":"\#(stamp)","orgId":"o-1","siteId":"g-1","thingName":"t-1","mac":"AA:BB","fwUpdateState":3}"#,
                #"{"eventType":"device/firmwareUpdated","timestamp":"\#(stamp)","orgId":"o-1","deviceGroupID":"g-1","thingName":"t-1","mac":"AA:BB","fwUpdateState":3}"#
            ),
            (
                .organization, #"{"eventType":"organization/planChanged","timestamp":"\#(stamp)","orgId":"o-1","isFreePlan":true}"#,
                #"{"orgId":"o-1","licensePhase":null,"isFreePlan":true,"AIControlSetting":null,"eventType":"organization/planChanged","timestamp":"\#(stamp)"}"#
            ),
            (
                .archive,
                #"{"eventType":"archive/stateChanged","timestamp":"\#(stamp)","siteId":"g-1","mac":"AA:BB","status":"Ready","createdAt":"\#(stamp)"}"#,
                #"{"eventType":"archive/stateChanged","timestamp":"\#(stamp)","deviceGroupID":"g-1","mac":"AA:BB","status":"Ready","createdAt":"\#(stamp)"}"#
            ),
            (.role, NotifierSwitchTests.role(7), NotifierSwitchTests.role(7)),
            (.revoke, Samples.revoke, Samples.revoke),
        ]
        for (upstream, channel, legacy) in pairs {
            let appSync = identities(channel, upstream, .appSyncChannels)
            #expect(appSync.count == 1, "\(upstream)")
            #expect(appSync == identities(legacy, upstream, .graphQL), "\(upstream)")
            #expect(appSync.first?.timestamp != nil, "\(upstream)")
        }
        #expect(
            identities(Samples.presenceChannel(online: true, at: 7), .device, .appSyncChannels)
                != identities(Samples.presenceChannel(online: true, at: 8), .device, .appSyncChannels), "another timestamp")
        #expect(
            identities(Samples.presenceChannel(online: true, at: 7), .device, .appSyncChannels)
                != identities(Samples.presenceChannel(online: false, at: 7), .device, .appSyncChannels), "another value")
        #expect(identities("not json", .role, .appSyncChannels).isEmpty)
        let identity = identities(Samples.presenceChannel(online: true, at: 7), .device, .appSyncChannels).first
        #expect(identity?.key == EventIdentity.Key(kind: .devicePresence, entity: "AA:BB", value: "true"))
        #expect(identity?.timestamp == "1795323607000", "the instant, in milliseconds")
    }

    @Test("identity with the default legacy documents (no timestamp on GraphQL): the value decides, and the ledger matches")
    func identityWithoutTimestamp() async {
        let router = await Fixture().router
        let encoder = EventIdentity.makeEncoder()
        func identities(_ json: String, _ upstream: Upstream, _ dialect: TransportDialect) -> [EventIdentity] {
            router.normalisedEvents(of: RealtimePayload(json: Data(json.utf8)), from: upstream, dialect: dialect).map {
                EventIdentity($0, encoder: encoder)
            }
        }
        let appSync = identities(Samples.presenceChannel(online: true, at: 7), .device, .appSyncChannels)
        let legacy = identities(
            #"{"mac":"AA:BB","derivant":"X1","online":true,"recording":null,"fwUpdateState":null,"thingName":"t-1","deviceGroupID":"g-1"}"#,
            .device, .graphQL)
        #expect(legacy.map(\.key) == appSync.map(\.key))
        #expect(legacy.first?.timestamp == nil)
        var ledger = DeliveredLedger(limit: 10)
        ledger.record(identities(Samples.presenceChannel(online: true, at: 6), .device, .appSyncChannels))
        ledger.record(appSync)
        let matched9 = ledger.consume(appSync)
        #expect(matched9, "the same instant is matched first")
        let matched10 = ledger.consume(legacy)
        #expect(matched10, "without a timestamp, the same value matches")
        #expect(ledger.isEmpty)
        ledger.record(appSync)
        let matched11 = ledger.consume(identities(Samples.presenceChannel(online: true, at: 8), .device, .appSyncChannels))
        #expect(!matched11, "another instant")
    }
}
