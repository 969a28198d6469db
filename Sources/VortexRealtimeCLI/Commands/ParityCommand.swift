import ArgumentParser
import BackendNotifier
import Foundation
import LocalBackend
import Logging
import RealtimeDrill

/// `vortex-realtime parity`: both transports side by side for one identity, on scripted or real traffic.
struct ParityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parity",
        abstract: "Watch one identity on AppSync Events and GraphQL side by side; exit 0 only when nothing differs outside reported gaps.",
        discussion: """
            Signs --user in on both transports at once, each notifier observing its nine streams, for --duration seconds
            (or until SIGINT/SIGTERM, which end it with the report). Every event is normalised to the notifier's public model
            and matched across the two sides: same kind, same entity (device, archive, organization, user), equal fields,
            timestamps within --tolerance. Reports matched, onlyAppSync, onlyGraphQL and different (with the events), the
            arrival-time difference p50/p99, and the gaps each side reported (resumed, eventsLost); events inside a reported
            gap are listed apart from true mismatches. --backend embedded (the default) starts the local backend and publishes
            scripted traffic for the identity; with --appsync-endpoint and --graphql-endpoint (or --config) it watches real
            traffic. Exit status 0 when nothing differs outside reported gaps, 1 otherwise, 2 for bad arguments.
            """
    )

    @OptionGroup var target: DrillBackendOptions

    @Option(help: "Seconds to watch (default: 10 with the embedded backend, until interrupted with real endpoints).")
    var duration: Double?

    @Option(help: "Embedded backend: scripted events per second.")
    var rate: Double = 20

    @OptionGroup var comparison: ComparisonOptions

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration: must be positive") }
        guard rate > 0, rate <= 1000 else { throw ValidationError("--rate: between 0 and 1000 events per second") }
    }

    func run() async throws {
        _ = CLILogging.bootstrap(verbose: false, level: .error)
        let resolved = try await target.resolve()
        var runner = ShadowParityRunner(target: resolved.target)
        runner.tolerance = comparison.tolerance
        runner.onProgress = { StandardStreams.error($0) }
        let scripted = target.mode == .embedded ? resolved.backend : nil
        let seconds = duration ?? (scripted == nil ? nil : 10)
        let identity = resolved.target.identity
        let rate = self.rate
        let termination = await SignalWatcher.arm()  // before any output a caller may answer with a signal
        let report: ShadowParityReport
        do {
            report = try await runner.run {
                await Self.watch(seconds: seconds, until: termination) {
                    if let scripted { try await Self.publishScripted(through: scripted, identity: identity, rate: rate) }
                }
            }
        } catch {
            await resolved.shutdown()
            throw CLIFailure.runtime("parity failed: \(error)")
        }
        await resolved.shutdown()
        StandardStreams.output(comparison.json ? JSONLine.encode(report) : report.rendered())
        if !report.passed { throw ExitCode(1) }
    }

    /// Returns after `seconds` (never without), on SIGINT/SIGTERM, or when stdout closes; `traffic` runs meanwhile
    /// (traffic that ends by itself does not end the run).
    static func watch(
        seconds: Double?, until termination: SignalWatcher, traffic: @escaping @Sendable () async throws -> Void
    ) async {
        enum Ending { case traffic, stop }
        await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                await termination.waitForTermination()
                return .stop
            }
            if let seconds {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                    return .stop
                }
            }
            group.addTask {
                try? await traffic()
                return .traffic
            }
            while let ending = await group.next(), ending == .traffic {}
            group.cancelAll()
        }
    }

    /// The drill's scripted story for `identity`, published through the embedded backend until cancelled.
    static func publishScripted(through backend: any DrillBackend, identity: DrillIdentity, rate: Double) async throws {
        let kinds = DrillScript.story(for: identity)
        var index = 0
        while !Task.isCancelled {
            let stamp = ISO8601Timestamp.string(from: Date(), fractionalSeconds: true)
            try await backend.publish(DrillScript.event(index, kind: kinds[index % kinds.count], timestamp: stamp, identity: identity))
            index += 1
            try await Task.sleep(for: .milliseconds(Int64(1000 / rate)))
        }
    }
}
