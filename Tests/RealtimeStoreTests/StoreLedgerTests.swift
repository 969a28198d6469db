import BackendNotifier
import Foundation
import Testing

@testable import RealtimeStore

@Suite("StoreLedger: the merge rules")
struct StoreLedgerTests {
    static func presence(_ thing: String?, online: Bool, at second: Int?) -> VortexEvent {
        .devicePresence(
            DevicePresenceOutput(
                eventType: "device/presenceChanged", timestamp: second.map { "2026-11-26T10:00:\(String(format: "%02d", $0))Z" },
                thingName: thing, value: online))
    }

    @Test("the newest timestamp per entity wins: an older event is dropped, live or backfilled, so nothing goes backwards")
    func newestWins() {
        var ledger = StoreLedger()
        #expect(
            ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .live) == .applied(.init(kind: .devicePresence, name: "t-1")))
        // A backfill racing the live event returns the older value: dropped.
        #expect(ledger.apply(Self.presence("t-1", online: false, at: 5), origin: .backfill) == .older)
        // A late live event (the other transport's copy during a switch) is older too.
        #expect(ledger.apply(Self.presence("t-1", online: false, at: 9), origin: .live) == .older)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.payload.online == true)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.origin == .live)
        // A newer backfilled value wins and says where it came from.
        #expect(
            ledger.apply(Self.presence("t-1", online: false, at: 20), origin: .backfill)
                == .applied(.init(kind: .devicePresence, name: "t-1")))
        #expect(ledger.snapshot.devices["t-1"]?.presence?.origin == .backfill)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.payload.online == false)
    }

    @Test("a backfill returning what was delivered live is a duplicate and changes nothing (the origin stays live)")
    func duplicates() {
        var ledger = StoreLedger()
        _ = ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .live)
        #expect(ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .backfill) == .duplicate)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.origin == .live)
    }

    @Test("of two different events with the same instant: a live one replaces; a backfilled one only what preceded its call")
    func sameInstant() {
        var ledger = StoreLedger()
        _ = ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .live)
        // A call started after the live value was applied: its answer is as of then, so it replaces it.
        let callStart = ledger.sequence
        #expect(
            ledger.apply(Self.presence("t-1", online: false, at: 10), origin: .backfill, callStart: callStart)
                == .applied(.init(kind: .devicePresence, name: "t-1")))
        #expect(ledger.snapshot.devices["t-1"]?.presence?.payload.online == false)
        #expect(
            ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .live) == .applied(.init(kind: .devicePresence, name: "t-1")))
    }

    @Test("a backfill fetched before a same-instant live event does not overwrite it")
    func backfillStartedBeforeSameInstantLive() {
        var ledger = StoreLedger()
        _ = ledger.apply(Self.presence("t-1", online: true, at: 5), origin: .live)
        // The call starts (its answer is as of now), then a live event of the same instant as its answer arrives.
        let callStart = ledger.sequence
        _ = ledger.apply(Self.presence("t-1", online: false, at: 10), origin: .live)
        #expect(ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .backfill, callStart: callStart) == .older)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.payload.online == false)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.origin == .live)
        // A backfill of unknown start replaces nothing on a tie either.
        #expect(ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .backfill) == .older)
    }

    @Test("without a timestamp on either side: live events replace (they arrive in order); a backfill replaces only what preceded its call")
    func withoutTimestamp() {
        var ledger = StoreLedger()
        #expect(
            ledger.apply(Self.presence("t-1", online: true, at: nil), origin: .backfill)
                == .applied(.init(kind: .devicePresence, name: "t-1")))
        let callStart = ledger.sequence
        #expect(
            ledger.apply(Self.presence("t-1", online: false, at: nil), origin: .live) == .applied(.init(kind: .devicePresence, name: "t-1"))
        )
        // Applied after the call started: the live value stays, whatever the backfill's timestamp.
        #expect(ledger.apply(Self.presence("t-1", online: true, at: nil), origin: .backfill, callStart: callStart) == .older)
        #expect(ledger.apply(Self.presence("t-1", online: true, at: 30), origin: .backfill, callStart: callStart) == .older)
        #expect(ledger.apply(Self.presence("t-1", online: true, at: 30), origin: .backfill) == .older)
        #expect(ledger.snapshot.devices["t-1"]?.presence?.payload.online == false)
        // A call started after it: its answer replaces it.
        #expect(
            ledger.apply(Self.presence("t-1", online: true, at: 30), origin: .backfill, callStart: ledger.sequence)
                == .applied(.init(kind: .devicePresence, name: "t-1")))
    }

    @Test("kinds of one device are separate entities; a device event without a thing name and archive events are not kept")
    func entities() {
        var ledger = StoreLedger()
        _ = ledger.apply(Self.presence("t-1", online: true, at: 10), origin: .live)
        let recording = VortexEvent.deviceRecording(
            DeviceRecordingOutput(timestamp: "2026-11-26T10:00:01Z", thingName: "t-1", value: true))
        #expect(ledger.apply(recording, origin: .live) == .applied(.init(kind: .deviceRecording, name: "t-1")))
        #expect(ledger.snapshot.devices["t-1"]?.presence?.payload.online == true)
        #expect(ledger.apply(Self.presence(nil, online: true, at: 10), origin: .live) == .notKept)
        #expect(ledger.apply(.archiveState(ArchiveStateOutput(thingName: "t-1")), origin: .live) == .notKept)
        #expect(ledger.snapshot.devices.count == 1)
    }

    @Test("the organization's kinds and the user's role change and revocation follow the same rule")
    func organizationAndUser() {
        var ledger = StoreLedger()
        let newer = VortexEvent.plan(PlanStateOutput(timestamp: "2026-11-26T10:00:10Z", orgId: "o-1", isFreePlan: false))
        let older = VortexEvent.plan(PlanStateOutput(timestamp: "2026-11-26T10:00:05Z", orgId: "o-1", isFreePlan: true))
        #expect(ledger.apply(newer, origin: .live) == .applied(.init(kind: .plan, name: "")))
        #expect(ledger.apply(older, origin: .backfill) == .older)
        #expect(ledger.snapshot.organization.plan?.payload.isFreePlan == false)
        let role = VortexEvent.roleChanged(RoleChangeOutput(timestamp: "2026-11-26T10:00:10Z", reason: "promoted"))
        #expect(ledger.apply(role, origin: .live) == .applied(.init(kind: .roleChanged, name: "")))
        #expect(ledger.snapshot.roleChange?.payload.reason == "promoted")
    }
}
