import BackendNotifier
import Composition
import Foundation
import LocalBackend
import Logging
import SubscriberCore

/// Runs the parity check and the rollback drill against a backend.
public struct DrillRunner: Sendable {
    /// Where events are published and the transports connect.
    public let backend: any DrillBackend
    /// Called for every value the rollback drill's notifier delivers (stream name, JSON) — the demo shows them.
    public var onValue: @Sendable (String, String) -> Void = { _, _ in }
    /// Called with progress lines.
    public var onProgress: @Sendable (String) -> Void = { _ in }
    /// Called after each event of the rollback drill is published, with the count so far and the total.
    public var onPublished: @Sendable (Int, Int) -> Void = { _, _ in }
    private let stamps = TimestampSequence()

    /// Creates a runner.
    public init(backend: any DrillBackend) { self.backend = backend }

    /// Both checks.
    public func run(events: Int) async throws -> DrillReport {
        DrillReport(parity: try await runParity(events: events), rollback: try await runRollback(events: events))
    }

    // MARK: Preflight

    /// Runs `RealtimePreflight` for both transports with the drill's configuration (its GraphQL operations included).
    public func runPreflight() async throws -> [PreflightReport] {
        var reports: [PreflightReport] = []
        for kind in RealtimeConfiguration.TransportKind.allCases {
            let configuration = try self.configuration(kind)
            let preflight = RealtimePreflight(
                configuration: configuration, auth: StaticAuthSession(.bearerToken(try backend.token(for: DrillScript.user))),
                userId: DrillScript.user, organizationId: DrillScript.organization, logger: quietLogger)
            reports.append(await preflight.run(kind))
        }
        return reports
    }

    // MARK: Parity

    /// Publishes `events` scripted events once and compares what the notifier delivers on each transport.
    public func runParity(events count: Int) async throws -> ParityReport {
        let appsync = try stack(.appsync)
        let graphql = try stack(.graphql)
        let appsyncRecorder = await StreamRecorder(notifier: appsync.notifier)
        let graphqlRecorder = await StreamRecorder(notifier: graphql.notifier)
        defer {
            appsyncRecorder.cancel()
            graphqlRecorder.cancel()
        }
        onProgress("parity: waiting for both notifiers to be live")
        try await warmUp([appsyncRecorder, graphqlRecorder])
        let published = try await publish(count, interval: .milliseconds(2))
        let expected = Self.expectedTimestamps(published)
        _ = await appsyncRecorder.waitFor(expected, timeout: 10)
        _ = await graphqlRecorder.waitFor(expected, timeout: 10)
        await appsync.shutdown()
        await graphql.shutdown()
        let streams = DrillScript.allStreams.map { name -> ParityReport.Stream in
            let left = appsyncRecorder.values(of: name).map(\.json)
            let right = graphqlRecorder.values(of: name).map(\.json)
            let difference = zip(left, right).first { $0 != $1 }.map { "appsync \($0.0) vs graphql \($0.1)" }
            return ParityReport.Stream(
                stream: name, published: expected[name]?.count ?? 0, appsync: left.count, graphql: right.count,
                identical: left == right, difference: difference ?? (left.count == right.count ? nil : "different counts"))
        }
        return ParityReport(streams: streams)
    }

    // MARK: Rollback

    /// One notifier on AppSync Events; switches to GraphQL a third of the way through and back at two thirds.
    public func runRollback(events count: Int, interval: Duration = .milliseconds(10)) async throws -> RollbackReport {
        let stack = try self.stack(.appsync)
        let recorder = await StreamRecorder(notifier: stack.notifier, onValue: onValue)
        defer { recorder.cancel() }
        onProgress("rollback: waiting for the notifier to be live on appsync")
        try await warmUp([recorder])
        var switches: [RollbackReport.Switch] = []
        var published: [(DomainEvent, Date)] = []
        let thirds = [count / 3, 2 * count / 3]
        for index in 0..<count {
            if thirds.contains(index) {
                let target: RealtimeConfiguration.TransportKind = index == thirds[0] ? .graphql : .appsync
                let from = await stack.activeKind
                onProgress("rollback: switching \(from) -> \(target)")
                let started = ContinuousClock.now
                try await stack.switchTransport(to: target)
                let elapsed = ContinuousClock.now - started
                let gaps = {
                    recorder.events.compactMap { event -> GapWindow? in
                        if case .transportSwitched(_, _, let gap, _) = event { return gap }
                        return nil
                    }
                }
                // The switch event reaches the recorder asynchronously.
                for _ in 0..<100 where gaps().count <= switches.count { try await Task.sleep(for: .milliseconds(5)) }
                if let gap = gaps().last {
                    onProgress(
                        "rollback: on \(target) after \(Int((gap.duration * 1000).rounded())) ms; events published inside \(gap) may be missing (reported)"
                    )
                }
                switches.append(
                    RollbackReport.Switch(
                        from: from.rawValue, to: target.rawValue, windowStart: "", windowEnd: "",
                        milliseconds: Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000))
            }
            onPublished(index + 1, count)
            published += try await publish(1, startingAt: index, interval: interval)
        }
        let expected = Self.expectedTimestamps(published)
        _ = await recorder.waitFor(expected, timeout: 10)
        await stack.shutdown()
        // The windows the notifier reported.
        let windows = recorder.events.compactMap { event -> GapWindow? in
            if case .transportSwitched(_, _, let gap, _) = event { return gap }
            return nil
        }
        for (index, window) in windows.prefix(switches.count).enumerated() {
            switches[index].windowStart = ISO8601Timestamp.string(from: window.start, fractionalSeconds: true)
            switches[index].windowEnd = ISO8601Timestamp.string(from: window.end, fractionalSeconds: true)
        }
        let publishedAt = Dictionary(
            published.map { (event, date) in (event.timestamp ?? "", date) }, uniquingKeysWith: { first, _ in first })
        var latencies: [Double] = []
        let streams = DrillScript.allStreams.map { name -> RollbackReport.Stream in
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
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return RollbackReport(
            streams: streams, switches: switches, latencyP50Milliseconds: percentile(0.5), latencyP99Milliseconds: percentile(0.99))
    }

    // MARK: Helpers

    func stack(_ kind: RealtimeConfiguration.TransportKind) throws -> RealtimeStack {
        let configuration = try self.configuration(kind)
        let token = try backend.token(for: DrillScript.user)
        return try RealtimeStack(
            configuration: configuration, auth: StaticAuthSession(.bearerToken(token)), userId: DrillScript.user,
            organizationId: DrillScript.organization, logger: quietLogger)
    }

    private var quietLogger: Logger {
        var logger = Logger(label: "vortex.drill")
        logger.logLevel = .error
        return logger
    }

    func configuration(_ kind: RealtimeConfiguration.TransportKind) throws -> RealtimeConfiguration {
        var configuration = RealtimeConfiguration()
        configuration.transport = kind
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        configuration.reconnect = "fixed:0.5"
        configuration.graphQLOperations = DrillScript.graphQLOperations
        return configuration
    }

    /// Waits until every upstream is live, then proves delivery end to end with one event per upstream (GraphQL has no
    /// subscribe acknowledgement, so "sent" is not yet "registered on the server"), and forgets those events.
    private func warmUp(_ recorders: [StreamRecorder]) async throws {
        for recorder in recorders where !(await recorder.waitForLive(upstreams: 5, timeout: 15)) {
            throw DrillError.notLive("not every upstream subscription became live within 15 s")
        }
        for _ in 0..<20 {
            let sentinels = try await publish(
                5, kinds: [.devicePresence, .plan, .archiveState, .roleChanged, .tokenRevoked], interval: .zero)
            let expected = Self.expectedTimestamps(sentinels)
            var ready = true
            for recorder in recorders where !(await recorder.waitFor(expected, timeout: 0.5)) { ready = false }
            if ready {
                for recorder in recorders { recorder.reset() }
                return
            }
        }
        throw DrillError.notLive("warm-up events did not arrive")
    }

    @discardableResult
    private func publish(
        _ count: Int, startingAt start: Int = 0, kinds: [DomainEventKind] = DrillScript.story, interval: Duration
    ) async throws -> [(DomainEvent, Date)] {
        var sent: [(DomainEvent, Date)] = []
        for index in start..<(start + count) {
            let (stamp, date) = stamps.next()
            let event = DrillScript.event(index, kind: kinds[index % kinds.count], timestamp: stamp)
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
