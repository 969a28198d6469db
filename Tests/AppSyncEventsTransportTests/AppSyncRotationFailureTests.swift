import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import AppSyncEventsTransport

@Suite("AppSync Events rotation that goes wrong: every loss reported, no subscription left dark", .timeLimit(.minutes(2)))
struct AppSyncRotationFailureTests {
    /// Live subscriptions to `channels` on `old`, rotated at 90 s to `new`, which has received their subscribes.
    private func rotating(
        _ harness: AppSyncHarness, _ channels: [String] = ["default/a"]
    ) async throws -> (probes: [SubscriptionProbe], ids: [String], old: ScriptedConnection, new: ScriptedConnection) {
        var probes: [SubscriptionProbe] = []
        for channel in channels { probes.append(await harness.subscribe(channel)) }
        let old = try await harness.acceptConnection()
        var ids: [String] = []
        for (channel, probe) in zip(channels, probes) {
            let id = try await AppSyncHarness.expectSubscribe(on: old, channel: channel)
            old.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
            #expect(try await probe.next() == .live)
            ids.append(id)
        }
        try await harness.clock.waitForSleeper(sleeping: .seconds(90))
        harness.clock.advance(by: .seconds(90))
        let new = try await harness.acceptConnection()
        for (channel, id) in zip(channels, ids) { #expect(try await AppSyncHarness.expectSubscribe(on: new, channel: channel) == id) }
        return (probes, ids, old, new)
    }

    private static func configure(_ configuration: inout AppSyncEventsConfiguration) {
        configuration.maxConnectionDuration = .seconds(100)
        configuration.rotationLead = .seconds(10)
        configuration.link.liveness.quietPeriod = nil  // the rotation's timeline alone
    }

    @Test("a successor lost after the old link's unsubscribe: subscribed again on the old link, resumed with the gap")
    func successorLostAfterUnsubscribe() async throws {
        let harness = try AppSyncHarness(configure: Self.configure)
        let (probes, ids, old, new) = try await rotating(harness)
        let (probe, id) = (probes[0], ids[0])
        new.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        let unsubscribe = try await old.nextSentJSON()
        #expect(unsubscribe["type"] as? String == "unsubscribe" && unsubscribe["id"] as? String == id)
        new.emit(AppSyncHarness.dataFrame(id: id, event: #"{"n":4}"#))
        new.failTransport()
        // The successor's end comes first (the two links' frames are not ordered with each other).
        #expect(try await AppSyncHarness.expectSubscribe(on: old, channel: "default/a") == id, "subscribed again where it is wanted")
        old.emit(#"{"type":"unsubscribe_success","id":"\#(id)"}"#)
        harness.clock.advance(by: .seconds(1))
        old.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        // From its confirmation on the successor (90 s), minus the margin: what the successor buffered is inside.
        let gap = GapWindow(start: Date(timeIntervalSince1970: 1_700_000_088), end: Date(timeIntervalSince1970: 1_700_000_091))
        #expect(try await probe.next() == .resumed(gap: gap))
        old.emit(AppSyncHarness.dataFrame(id: id, event: #"{"n":5}"#))
        #expect(try await probe.next() == .payload(RealtimePayload(json: Data(#"{"n":5}"#.utf8))))
        #expect(!old.isClosed)
        await harness.transport.disconnect()
    }

    @Test("a subscribe refused with a generic error on the successor fails that stream; the rotation completes for the rest")
    func genericErrorOnSuccessor() async throws {
        let harness = try AppSyncHarness(configure: Self.configure)
        let (probes, ids, old, new) = try await rotating(harness, ["default/a", "default/b"])
        let (probe, id, sibling, siblingID) = (probes[0], ids[0], probes[1], ids[1])
        new.emit(#"{"type":"error","id":"\#(id)","errors":[{"errorType":"LimitExceededError","message":"slow down"}]}"#)
        guard case .failed(let error) = try await probe.ending() else { Issue.record("the refused stream must end"); return }
        #expect(error as? RealtimeError == .subscriptionRejected(errorType: "LimitExceededError", message: "slow down"))
        new.emit(#"{"type":"subscribe_success","id":"\#(siblingID)"}"#)
        let unsubscribe = try await old.nextSentJSON()
        #expect(unsubscribe["type"] as? String == "unsubscribe" && unsubscribe["id"] as? String == siblingID)
        old.emit(#"{"type":"unsubscribe_success","id":"\#(siblingID)"}"#)
        #expect(try await old.waitForClientClose().reason == "rotated")
        new.emit(AppSyncHarness.dataFrame(id: siblingID, event: "1"))
        #expect(try await sibling.next() == .payload(RealtimePayload(json: Data("1".utf8))))
        await harness.transport.disconnect()
    }

    @Test("a subscribe the successor never answers is sent again at the cut-over, and resumes with its gap")
    func unansweredOnSuccessor() async throws {
        let harness = try AppSyncHarness(configure: Self.configure)
        let (probes, ids, old, new) = try await rotating(harness)
        let (probe, id) = (probes[0], ids[0])
        try await harness.clock.waitForSleeper(sleeping: .seconds(30))
        harness.clock.advance(by: .seconds(30))
        #expect(try await old.waitForClientClose().reason == "rotated")
        #expect(try await AppSyncHarness.expectSubscribe(on: new, channel: "default/a") == id, "subscribed again on the new primary")
        new.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)
        // From the rotation's start (90 s), minus the margin: the old link is not known to have delivered after it.
        let gap = GapWindow(start: Date(timeIntervalSince1970: 1_700_000_088), end: Date(timeIntervalSince1970: 1_700_000_120))
        #expect(try await probe.next() == .resumed(gap: gap))
        await harness.transport.disconnect()
    }

    @Test("a broadcast_error or an unreadable event on the successor, for a subscription confirmed there, is a reported loss")
    func lossOnSuccessor() async throws {
        let harness = try AppSyncHarness(configure: Self.configure)
        let (probes, ids, _, new) = try await rotating(harness)
        let (probe, id) = (probes[0], ids[0])
        new.emit(#"{"type":"subscribe_success","id":"\#(id)"}"#)  // the old link's unsubscribe stays unanswered
        new.emit(#"{"type":"broadcast_error","id":"\#(id)","errors":[{"errorType":"LimitExceededError","message":"dropped"}]}"#)
        guard case .lost(let loss) = try await probe.next() else { Issue.record("expected a loss report"); return }
        #expect(loss.count == 1 && loss.reason == .serverError)
        new.emit("{\"type\":\"data\",\"id\":\"\(id)\",\"event\":\"\\ud800\"}")
        guard case .lost(let unreadable) = try await probe.next() else { Issue.record("expected a loss report"); return }
        #expect(unreadable.count == 1 && unreadable.reason == .undecodable)
        await harness.transport.disconnect()
    }
}
