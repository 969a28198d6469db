import BackendNotifier
import Composition
import Foundation
import LocalBackend
import Logging
import RealtimePreflight
import SubscriberCore

/// Runs preflight, the parity check and the rollback drill against a backend, as `vortex-realtime drill` and `demo` do.
///
/// With the `admin` trigger the drill publishes its own events (each with a unique timestamp), so parity compares every
/// stream of both APIs value for value and the rollback counts losses and duplicates exactly. With `command` and
/// `none` it cannot know what was published: parity is the shadow comparison (``ShadowParityRunner``) and the
/// rollback is judged against two reference notifiers that are never switched (see `DrillRunner+Observed.swift`).
public struct DrillRunner: Sendable {
    /// The backend, credentials and identity.
    public let target: DrillTarget
    /// Where events come from.
    public let trigger: DrillTrigger
    /// Called for every value the rollback drill's notifier delivers (stream name, JSON) — the demo shows them.
    public var onValue: @Sendable (String, String) -> Void = { _, _ in }
    /// Called with progress lines.
    public var onProgress: @Sendable (String) -> Void = { _ in }
    /// Called after each event of the rollback drill is caused, with the count so far and the total.
    public var onPublished: @Sendable (Int, Int) -> Void = { _, _ in }
    /// The parity tolerance (`command`, `none`), in seconds. Default 2.
    public var tolerance: TimeInterval = 2
    /// The pause between two caused events (`admin`, `command`); `nil`: 5 ms for `admin` (200 events a second),
    /// 250 ms for `command`.
    public var interval: Duration?
    /// How long each phase watches natural traffic (`none`). Default 60 s.
    public var passiveDuration: Duration = .seconds(60)
    let stamps = TimestampSequence()
    let sequence = Locked(0)

    /// Creates a runner.
    public init(target: DrillTarget, trigger: DrillTrigger) {
        self.target = target
        self.trigger = trigger
    }

    /// A runner on `backend` as the sample user (`u-1`, the backend's token), publishing through the backend: the demo
    /// and the embedded drill.
    public init(backend: any DrillBackend, identity: DrillIdentity = .sample) {
        var configuration = RealtimeConfiguration()
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        configuration.reconnect = "fixed:0.5"
        configuration.graphQLOperations = DrillScript.graphQLOperations
        self.init(
            target: DrillTarget(
                configuration: configuration, auth: BackendTokenSession(backend: backend, user: identity.user), identity: identity),
            trigger: .admin(backend))
    }

    /// Preflight on both transports, then (when it passed) parity and the rollback, judged.
    public func run(events: Int) async throws -> DrillReport {
        let preflight = await runPreflight()
        guard preflight.allSatisfy(\.passed) else {
            return DrillReport(trigger: trigger.name, identity: target.identity, preflight: preflight)
        }
        var report = DrillReport(trigger: trigger.name, identity: target.identity, preflight: preflight)
        switch trigger {
        case .admin:
            report.parity = try await runParity(events: events)
            report.rollback = try await runRollback(events: events, interval: interval ?? .milliseconds(5))
        case .command, .none:
            let commandRuns = Locked(TriggerStatistics())
            report.shadowParity = try await runObservedParity(events: events, statistics: commandRuns)
            report.rollback = try await runObservedRollback(events: events, statistics: commandRuns)
            if case .command = trigger { report.command = commandRuns.withLock { $0 } }
        }
        report.judge()
        return report
    }

    // MARK: Preflight

    /// Runs `RealtimePreflight` for both transports with the drill's configuration (its GraphQL operations and
    /// `connection_init` template included).
    public func runPreflight() async -> [PreflightReport] {
        var reports: [PreflightReport] = []
        for kind in RealtimeConfiguration.TransportKind.allCases {
            let preflight = RealtimePreflight(
                configuration: target.configuration(kind), auth: target.auth, userId: target.identity.user,
                organizationId: target.identity.organization, logger: target.logger)
            reports.append(await preflight.run(kind))
        }
        return reports
    }

    // MARK: Parity (admin)

    /// Publishes `events` scripted events once and compares what the notifier delivers on each transport, every stream
    /// of both APIs value for value (trigger `admin` only).
    public func runParity(events count: Int) async throws -> ParityReport {
        let appsync = try target.stack(.appsync)
        let graphql = try target.stack(.graphql)
        let appsyncRecorder = await StreamRecorder(notifier: appsync.notifier)
        let graphqlRecorder = await StreamRecorder(notifier: graphql.notifier)
        defer {
            appsyncRecorder.cancel()
            graphqlRecorder.cancel()
        }
        onProgress("parity: waiting for both notifiers to be live as \(target.identity.user)")
        do {
            try await warmUp([appsyncRecorder, graphqlRecorder])
        } catch {
            await appsync.shutdown()
            await graphql.shutdown()
            throw error
        }
        let published = try await publish(count, interval: .milliseconds(2))
        let expected = Self.expectedTimestamps(published)
        _ = await appsyncRecorder.waitFor(expected, timeout: 10)
        _ = await graphqlRecorder.waitFor(expected, timeout: 10)
        await appsync.shutdown()
        await graphql.shutdown()
        let streams = DrillScript.streams(reachedBy: story).map { name -> ParityReport.Stream in
            let left = appsyncRecorder.values(of: name).map(\.json)
            let right = graphqlRecorder.values(of: name).map(\.json)
            let difference = zip(left, right).first { $0 != $1 }.map { "appsync \($0.0) vs graphql \($0.1)" }
            return ParityReport.Stream(
                stream: name, published: expected[name]?.count ?? 0, appsync: left.count, graphql: right.count,
                identical: left == right, difference: difference ?? (left.count == right.count ? nil : "different counts"))
        }
        return ParityReport(streams: streams)
    }

    // MARK: Rollback (admin)

    /// One notifier on AppSync Events; switches to GraphQL after a third of `count` events and back after another third,
    /// while the drill keeps publishing one event every `interval` (trigger `admin` only): traffic flows through each
    /// switch, however long it takes, and a last third follows the second switch. At least `count` events in all.
    public func runRollback(events count: Int, interval: Duration = .milliseconds(5)) async throws -> RollbackReport {
        let stack = try target.stack(.appsync)
        let recorder = await StreamRecorder(notifier: stack.notifier, onValue: onValue)
        defer { recorder.cancel() }
        onProgress("rollback: waiting for the notifier to be live on appsync")
        var switches: [RollbackReport.Switch] = []
        let sent = Locked<[(DomainEvent, Date)]>([])
        do {
            try await warmUp([recorder])
            let third = max(1, count / 3)
            let (progress, reportProgress) = AsyncStream<Int>.makeStream()
            let stop = Locked(false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    defer { reportProgress.finish() }
                    var index = 0
                    while !stop.withLock({ $0 }) {
                        let batch = try await publish(1, startingAt: index, interval: interval)
                        index += 1
                        let total = sent.withLock { sent in
                            sent += batch
                            return sent.count
                        }
                        onPublished(total, max(count, total))
                        reportProgress.yield(total)
                    }
                }
                var due = third
                for await total in progress where total >= due {
                    if switches.count == 2 {
                        stop.withLock { $0 = true }
                        break
                    }
                    switches.append(try await switchTransport(stack, recorder: recorder, switched: switches.count))
                    due = sent.withLock { $0.count } + third
                }
                try await group.waitForAll()
            }
        } catch {
            await stack.shutdown()
            throw error
        }
        let published = sent.withLock { $0 }
        let expected = Self.expectedTimestamps(published)
        _ = await recorder.waitFor(expected, timeout: 10)
        await stack.shutdown()
        let windows = switches.map(\.window)
        let publishedAt = Dictionary(
            published.map { (event, date) in (event.timestamp ?? "", date) }, uniquingKeysWith: { first, _ in first })
        var latencies: [Double] = []
        let streams = DrillScript.streams(reachedBy: story).map { name -> RollbackReport.Stream in
            let want = expected[name] ?? []
            let got = recorder.values(of: name)
            let counts = Dictionary(got.map { ($0.timestamp, 1) }, uniquingKeysWith: +)
            let missing = want.subtracting(counts.keys)
            let outside = missing.filter { stamp in
                guard let date = publishedAt[stamp] else { return true }
                return !windows.contains { $0.start.addingTimeInterval(-0.05) <= date && date <= $0.end.addingTimeInterval(0.05) }
            }
            for entry in got {
                if let sent = publishedAt[entry.timestamp] { latencies.append(entry.receivedAt.timeIntervalSince(sent) * 1000) }
            }
            return RollbackReport.Stream(
                stream: name, published: want.count, received: got.count, missing: missing.count, missingOutsideWindows: outside.count,
                duplicated: counts.values.reduce(0) { $0 + max(0, $1 - 1) })
        }
        latencies.sort()
        return RollbackReport(
            basis: "published", streams: streams, switches: switches,
            latencyP50Milliseconds: ShadowParityReport.percentile(latencies, 0.5),
            latencyP99Milliseconds: ShadowParityReport.percentile(latencies, 0.99))
    }

    /// Switches `stack` to the other transport and returns the switch as the notifier reported it: its
    /// `transportSwitched` event is the one source of the window every line shows.
    func switchTransport(_ stack: RealtimeStack, recorder: StreamRecorder, switched: Int) async throws -> RollbackReport.Switch {
        let from = await stack.activeKind
        onProgress("rollback: switching \(from) -> \(from.other)")
        try await stack.switchTransport(to: from.other)
        // The event reaches the recorder asynchronously.
        let deadline = Date().addingTimeInterval(5)
        while recorder.switches.count <= switched, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard recorder.switches.count > switched else {
            throw DrillError.notLive("the notifier reported no transportSwitched event for the switch to \(from.other)")
        }
        let reported = recorder.switches[switched]
        onProgress("rollback: \(reported.summary); events published inside it may be missing (reported)")
        return reported
    }

    // MARK: Helpers

    /// The kinds the drill can publish for its identity: device and archive kinds need a device group and an
    /// organization, organization kinds an organization.
    var story: [VortexEventKind] { DrillScript.story(for: target.identity) }

    /// Waits until every upstream is live, then proves delivery end to end with one event per upstream (GraphQL has no
    /// subscribe acknowledgement, so "sent" is not yet "registered on the server"), and forgets those events.
    private func warmUp(_ recorders: [StreamRecorder]) async throws {
        for recorder in recorders where !(await recorder.waitForLive(upstreams: 5, timeout: 15)) {
            throw DrillError.notLive("not every upstream subscription became live within 15 s")
        }
        let sentinelKinds = [VortexEventKind.devicePresence, .plan, .archiveState, .roleChanged, .tokenRevoked].filter(story.contains)
        for _ in 0..<20 {
            let sentinels = try await publish(sentinelKinds.count, kinds: sentinelKinds, interval: .zero)
            let expected = Self.expectedTimestamps(sentinels)
            var ready = true
            for recorder in recorders where !(await recorder.waitFor(expected, timeout: 0.5)) { ready = false }
            if ready {
                for recorder in recorders { recorder.reset() }
                return
            }
        }
        throw DrillError.notLive("warm-up events did not arrive (the admin trigger needs GraphQL documents that select timestamp)")
    }

    @discardableResult
    private func publish(
        _ count: Int, startingAt start: Int = 0, kinds: [VortexEventKind]? = nil, interval: Duration
    ) async throws -> [(
        DomainEvent, Date
    )] {
        guard case .admin(let backend) = trigger else { throw DrillError.backend("only the admin trigger publishes domain events") }
        let kinds = kinds ?? story
        var sent: [(DomainEvent, Date)] = []
        for index in start..<(start + count) {
            let (stamp, date) = stamps.next()
            let event = DrillScript.event(index, kind: kinds[index % kinds.count], timestamp: stamp, identity: target.identity)
            try await backend.publish(event)
            sent.append((event, date))
            if interval > .zero { try await Task.sleep(for: interval) }
        }
        return sent
    }

    static func expectedTimestamps(_ published: [(DomainEvent, Date)]) -> [String: Set<String>] {
        var expected: [String: Set<String>] = [:]
        for (event, _) in published {
            for stream in DrillScript.streams(of: event.kind) { expected[stream, default: []].insert(event.timestamp ?? "") }
        }
        return expected
    }
}

/// Strictly increasing millisecond timestamps, so every published event is identifiable.
final class TimestampSequence: Sendable {
    private let last = Locked(Date.distantPast)

    func next() -> (String, Date) {
        let date = last.withLock { last in
            var now = Date()
            if now.timeIntervalSince(last) < 0.001 { now = last.addingTimeInterval(0.001) }
            last = now
            return now
        }
        return (ISO8601Timestamp.string(from: date, fractionalSeconds: true), date)
    }
}
