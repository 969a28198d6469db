import BackendNotifier
import Composition
import Foundation
import LocalBackend
import SubscriberCore

/// How often the `command` trigger ran, and how it went.
public struct TriggerStatistics: Sendable, Codable, Equatable {
    /// Runs started.
    public var runs: Int
    /// Runs that failed (non-zero exit, could not start, timed out).
    public var failures: Int
    /// The first failure, for the report.
    public var firstFailure: String?

    /// Statistics so far.
    public init(runs: Int = 0, failures: Int = 0, firstFailure: String? = nil) {
        self.runs = runs
        self.failures = failures
        self.firstFailure = firstFailure
    }
}

/// The drill with the `command` and `none` triggers: it cannot know what was published, so parity is the shadow
/// comparison of two notifiers, and the rollback is judged against two reference notifiers (one per transport,
/// never switched) that watch the same identity at the same time. An event either reference saw is one the drilled
/// notifier should have delivered; one it missed counts as lost outside the windows unless its instant lies inside a
/// window the drilled notifier reported (a switch, `resumed`, `eventsLost`). What both references missed cannot be
/// counted.
extension DrillRunner {
    /// The shadow parity check while the trigger causes `events` events (`command`) or natural traffic flows for
    /// ``passiveDuration`` (`none`).
    func runObservedParity(events count: Int, statistics: Locked<TriggerStatistics>) async throws -> ShadowParityReport {
        var runner = ShadowParityRunner(target: target)
        runner.tolerance = tolerance
        runner.onProgress = onProgress
        return try await runner.run { try await traffic(phase: "parity", events: count, statistics: statistics) }
    }

    /// The rollback while events flow: AppSync Events → GraphQL a third of the way through, back at two thirds.
    func runObservedRollback(events count: Int, statistics: Locked<TriggerStatistics>) async throws -> RollbackReport {
        let reference = try await ShadowObservation.start(target)
        let stack: RealtimeStack
        do { stack = try target.stack(.appsync) } catch {
            await reference.stop()
            throw error
        }
        let recorder = await StreamRecorder(notifier: stack.notifier, onValue: onValue)
        let switches = Locked<[RollbackReport.Switch]>([])
        let start: Date
        let end: Date
        do {
            onProgress("rollback: waiting for the drilled notifier (appsync) and both reference notifiers to be live")
            try await reference.waitUntilLive(timeout: 15)
            guard await recorder.waitForLive(upstreams: NotifierUpstream.allCases.count, timeout: 15) else {
                throw DrillError.notLive("not every upstream subscription became live on appsync within 15 s")
            }
            start = Date()
            try await traffic(phase: "rollback", events: count, statistics: statistics) { [self] in
                let reported = try await switchTransport(stack, recorder: recorder, switched: switches.withLock { $0.count })
                switches.withLock { $0.append(reported) }
            }
            end = Date()
            // Counterparts still in flight: wait until the drilled notifier has what the references have, or the tolerance.
            let deadline = end.addingTimeInterval(max(0.5, tolerance))
            while Date() < deadline,
                Self.judge(reference: reference, drilled: recorder, start: start, end: end, tolerance: tolerance)
                    .contains(where: { $0.missing > 0 })
            {
                try await Task.sleep(for: .milliseconds(100))
            }
        } catch {
            recorder.cancel()
            await stack.shutdown()
            await reference.stop()
            throw error
        }
        recorder.cancel()
        await stack.shutdown()
        await reference.stop()
        return RollbackReport(
            basis: "observed", streams: Self.judge(reference: reference, drilled: recorder, start: start, end: end, tolerance: tolerance),
            switches: switches.withLock { $0 }, latencyP50Milliseconds: nil, latencyP99Milliseconds: nil)
    }

    /// Per nine-method stream: what the references saw from `start` to `end` against what the drilled notifier delivered.
    static func judge(
        reference: ShadowObservation, drilled: StreamRecorder, start: Date, end: Date, tolerance: TimeInterval
    ) -> [RollbackReport.Stream] {
        let parity = reference.judge(ParityMatcher(tolerance: tolerance), start: start, end: end)
        return judgeObserved(
            seen: parity.allEvents, delivered: drilled.observed(identity: reference.identity), windows: drilled.gaps, start: start,
            end: end, tolerance: tolerance)
    }

    /// The judgement itself, on what was recorded: `seen` is what the references received, `delivered` what the drilled
    /// notifier did, `windows` the gaps it reported. An event the references received from `start` to `end` is expected;
    /// one without a delivered counterpart is missing, outside the windows unless its instant lies in one.
    ///
    /// The drilled notifier may receive an event a little before the references do. Its copy then arrives before
    /// `start` while theirs arrives after it. So deliveries up to `tolerance` before `start` still answer expected events:
    /// a run that starts between the two copies loses nothing. Unanswered deliveries count only from `start`.
    package static func judgeObserved(
        seen: [ObservedEvent], delivered recorded: [ObservedEvent], windows: [ReportedGap], start: Date, end: Date,
        tolerance: TimeInterval
    ) -> [RollbackReport.Stream] {
        let expected = seen.filter { $0.arrivedAt >= start && $0.arrivedAt <= end }
        let delivered = recorded.filter { $0.arrivedAt >= start.addingTimeInterval(-tolerance) }
        let pairing = EventMatcher(tolerance: tolerance).pair(expected, delivered)
        let paired = pairing.matched + pairing.different
        return ObservedEvent.streams.map { stream in
            let missing = pairing.onlyLeft.filter { $0.stream == stream }
            let outside = missing.filter { event in !windows.contains { $0.covers(stream: stream) && $0.contains(event.instant) } }
            // Unpaired deliveries within the run: a second copy of a paired event is a duplicate; anything else is an
            // event neither reference saw.
            let extra = pairing.onlyRight.filter { $0.stream == stream && $0.arrivedAt >= start && $0.arrivedAt <= end }
            let duplicated = extra.filter { event in
                paired.contains {
                    $0.right.stream == stream && $0.right.timestamp == event.timestamp && $0.right.differingFields(from: event).isEmpty
                }
            }
            return RollbackReport.Stream(
                stream: stream, published: expected.filter { $0.stream == stream }.count,
                received: paired.filter { $0.right.stream == stream }.count + extra.count, missing: missing.count,
                missingOutsideWindows: outside.count, duplicated: duplicated.count, unexpected: extra.count - duplicated.count,
                missingOutsideWindowsEvents: outside.isEmpty
                    ? nil : outside.map { "\($0.entity) \($0.timestamp ?? "-"), arrived \($0.arrived)" })
        }
    }

    /// Causes the phase's events: runs the command `count` times (`command`), or waits ``passiveDuration`` (`none`).
    /// `atThird` runs a third and two thirds of the way through (the rollback's switches).
    func traffic(
        phase: String, events count: Int, statistics: Locked<TriggerStatistics>, atThird: (() async throws -> Void)? = nil
    ) async throws {
        switch trigger {
        case .command(let command):
            let pause = interval ?? .milliseconds(250)
            let thirds = atThird == nil ? [] : [count / 3, 2 * count / 3]
            onProgress("\(phase): running the trigger command \(count) times")
            for index in 0..<count {
                if thirds.contains(index), let atThird { try await atThird() }
                let number = sequence.withLock { number in
                    number += 1
                    return number
                }
                let kind = DrillScript.story[(number - 1) % DrillScript.story.count]
                var variables = [
                    "VORTEX_DRILL_SEQUENCE": "\(number)", "VORTEX_DRILL_PHASE": phase, "VORTEX_DRILL_KIND": kind.rawValue,
                    "VORTEX_DRILL_TIMESTAMP": stamps.next().0, "VORTEX_DRILL_USER": target.identity.user,
                ]
                variables["VORTEX_DRILL_ORG"] = target.identity.organization
                variables["VORTEX_DRILL_DEVICE_GROUP"] = target.identity.deviceGroup
                let run = await command.run(variables: variables)
                statistics.withLock { statistics in
                    statistics.runs += 1
                    if !run.succeeded {
                        statistics.failures += 1
                        if statistics.firstFailure == nil { statistics.firstFailure = "run \(number): \(run.failure ?? "failed")" }
                    }
                }
                onPublished(index + 1, count)
                try await Task.sleep(for: pause)
            }
        case .none:
            let third = passiveDuration / 3
            onProgress("\(phase): watching natural traffic for \(passiveDuration)")
            for step in 0..<3 {
                if step > 0, let atThird { try await atThird() }
                try await Task.sleep(for: third)
            }
        case .admin:
            throw DrillError.backend("the admin trigger is judged exactly (runParity, runRollback)")
        }
    }
}
