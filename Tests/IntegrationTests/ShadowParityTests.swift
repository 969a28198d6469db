import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import SubscriberCore
import Testing

/// `vortex-realtime parity`'s library over real sockets: one non-sample identity on both transports at once against
/// the local backend, with the default GraphQL documents (no timestamps or metadata on the GraphQL side).
@Suite("Shadow parity against the local backend", .serialized, .timeLimit(.minutes(3)))
struct ShadowParityTests {
    @Test("all nine kinds on both protocols: every event matched, nothing differs, exit status 0")
    func everythingMatches() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        var runner = ShadowParityRunner(target: try backend.target())
        runner.tolerance = 1
        let report = try await runner.run {
            for (index, kind) in (DrillScript.story + DrillScript.story).enumerated() {
                await backend.publish(index, kind)
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        await backend.stop()
        #expect(report.passed, "\(report.rendered())")
        #expect(report.matched == 2 * DrillScript.story.count, "\(report.rendered())")
        #expect(Set(report.events.matched.map(\.appsync.stream)) == Set(ObservedEvent.streams))
        #expect(report.onlyAppSync + report.onlyGraphQL + report.different + report.insideGaps == 0)
        #expect(report.arrivalDifferenceMilliseconds != nil)
    }

    @Test("a domain event published on one protocol only (admin \"protocols\") is a mismatch, named with its side")
    func oneSidedEvents() async throws {
        let backend = try await StagingLikeBackend.start(admin: true)
        var runner = ShadowParityRunner(target: try backend.target())
        runner.tolerance = 1
        let report = try await runner.run {
            await backend.publish(0, .plan)
            let appSyncOnly = #"{"kind":"roleChanged","userId":"u-7","payload":{"reason":"appsync only"},"protocols":["appsync"]}"#
            let graphQLOnly = #"{"kind":"roleChanged","userId":"u-7","payload":{"reason":"graphql only"},"protocols":["graphql"]}"#
            #expect(try await backend.postEvent(appSyncOnly) == 200)
            // Apart by more than the tolerance: two one-sided events of one entity at one time would pair as `different`.
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await backend.postEvent(graphQLOnly) == 200)
            // Refused, never read as "both": an unknown protocol and an empty list.
            #expect(try await backend.postEvent(#"{"kind":"plan","orgId":"o-7","protocols":["mqtt"]}"#) == 400)
            #expect(try await backend.postEvent(#"{"kind":"plan","orgId":"o-7","protocols":[]}"#) == 400)
            await backend.publish(1, .devicePresence)
            try await Task.sleep(for: .milliseconds(300))
        }
        await backend.stop()
        #expect(!report.passed)
        #expect(report.matched == 2, "\(report.rendered())")
        #expect(report.onlyAppSync == 1 && report.onlyGraphQL == 1, "\(report.rendered())")
        #expect(report.events.onlyAppSync.first?.value["reason"] == "appsync only")
        #expect(report.events.onlyGraphQL.first?.value["reason"] == "graphql only")
        #expect(report.different == 0 && report.insideGaps == 0)
    }

    @Test("an event GraphQL missed during its outage lies inside the gap GraphQL reported: listed apart, not a mismatch")
    func missedInsideAReportedGap() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        var runner = ShadowParityRunner(target: try backend.target())
        runner.tolerance = 1
        let report = try await runner.run {
            await backend.publish(0, .roleChanged)
            try await Task.sleep(for: .milliseconds(200))
            _ = backend.server.faults.setOutage(of: .graphQL, true)
            try await Task.sleep(for: .milliseconds(200))
            await backend.publish(1, .roleChanged)
            try await Task.sleep(for: .milliseconds(300))
            _ = backend.server.faults.setOutage(of: .graphQL, false)
            // GraphQL reconnects (0.5 s) and confirms each subscription live (first event, or 2 s without an error).
            try await Task.sleep(for: .seconds(4))
            await backend.publish(2, .roleChanged)
            try await Task.sleep(for: .milliseconds(300))
        }
        await backend.stop()
        #expect(report.passed, "\(report.rendered())")
        #expect(report.gaps.graphql >= 1, "\(report.rendered())")
        #expect(report.insideGaps == 1, "\(report.rendered())")
        #expect(report.events.insideGaps.first?.appsync?.value["reason"] == "role updated #1")
        #expect(report.events.insideGaps.first?.gap?.transport == "graphql")
        #expect(report.matched == 2, "\(report.rendered())")
    }
}
