import ArgumentParser
import Composition
import Foundation
import LocalBackend
import Logging
import RealtimeDrill

/// `vortex-realtime drill`: preflight, the parity check and the rollback drill, on the embedded backend or a real one.
struct DrillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drill",
        abstract: "Run preflight, the parity check and the rollback drill; exit 0 only when everything judged matched.",
        discussion: """
            Where: --backend embedded (the default) starts the local backend in-process; --backend URL uses a running
            `serve --admin` (http://HOST:PORT) with --token for --user; --appsync-endpoint and --graphql-endpoint (or
            --config) with --api-key, --token or --iam use real endpoints (staging). Who: --user, --org and, for device
            and archive events, --device-group.
            Events (--trigger): admin publishes the drill's own events through the admin endpoint (the default when there is
            one: embedded, --backend URL, or --admin-endpoint); command:CMD runs CMD once per event, without a shell (see
            docs/rollback-runbook.md for how it is split and the VORTEX_DRILL_* variables it gets); none waits --duration
            per phase for natural traffic. The report says what the trigger let it judge and what not.
            """
    )

    @OptionGroup var target: DrillBackendOptions

    @Option(name: .customLong("admin-endpoint"), help: "An admin base URL (…/vortex) for --trigger admin with real endpoints.")
    var adminEndpoint: String?

    @Option(help: "admin, command:CMD or none (default: admin when there is an admin endpoint; required otherwise).")
    var trigger: String?

    @Option(help: "Events to cause in each phase (admin, command).")
    var events = 30

    @Option(
        help:
            "Milliseconds between two caused events (default: 5 for admin, 200 events a second that keep flowing through each switch; 250 for command)."
    )
    var interval: Int?

    @Option(help: "Seconds each phase watches natural traffic (trigger none).")
    var duration: Double = 60

    @OptionGroup var comparison: ComparisonOptions

    func validate() throws {
        guard (3...10_000).contains(events) else { throw ValidationError("--events: between 3 and 10000") }
        if let interval, interval < 0 { throw ValidationError("--interval: must not be negative") }
        guard duration >= 3 else { throw ValidationError("--duration: at least 3 seconds (the rollback switches at thirds)") }
        if adminEndpoint != nil && target.mode != .endpoints {
            throw ValidationError("--admin-endpoint: only with real endpoints (--backend URL derives its own)")
        }
        _ = try parsedTrigger()
    }

    /// The trigger as asked: `.admin` (a backend is attached at run time), a parsed command, or none.
    enum Choice {
        case admin
        case command(TriggerCommand)
        case none
    }

    func parsedTrigger() throws -> Choice {
        let hasAdmin = target.mode != .endpoints || adminEndpoint != nil
        guard let trigger else {
            guard hasAdmin else {
                throw ValidationError("--trigger: required with real endpoints and no --admin-endpoint: command:CMD or none")
            }
            return .admin
        }
        switch trigger {
        case "admin":
            guard hasAdmin else {
                throw ValidationError("--trigger: admin needs an admin endpoint (--admin-endpoint); use command:CMD or none")
            }
            return .admin
        case "none":
            return .none
        case let text where text.hasPrefix("command:"):
            do {
                let command = try TriggerCommand(parsing: String(text.dropFirst("command:".count)))
                _ = try command.executable()
                return .command(command)
            } catch {
                throw ValidationError("--trigger: \(error)")
            }
        default:
            throw ValidationError("--trigger: expected admin, command:CMD or none")
        }
    }

    func run() async throws {
        _ = CLILogging.bootstrap(verbose: false, level: .error)
        let choice = try parsedTrigger()
        let resolved = try await target.resolve(adminEndpoint: adminEndpoint)
        var target = resolved.target
        let drillTrigger: DrillTrigger
        switch choice {
        case .admin:
            guard let backend = resolved.backend else {
                await resolved.shutdown()
                throw CLIFailure.badArgument("--trigger", "admin needs an admin endpoint")
            }
            drillTrigger = .admin(backend)
            // The admin trigger tells its events apart by their timestamps, so GraphQL must select them: without the
            // app's own documents, the drill's (the local backend's extension fields) are used.
            if target.configuration.graphQLOperations == nil { target.configuration.graphQLOperations = DrillScript.graphQLOperations }
        case .command(let command): drillTrigger = .command(command)
        case .none: drillTrigger = .none
        }
        var runner = DrillRunner(target: target, trigger: drillTrigger)
        runner.onProgress = { StandardStreams.error($0) }
        runner.tolerance = comparison.tolerance
        runner.interval = interval.map { .milliseconds($0) }
        runner.passiveDuration = .milliseconds(Int64(duration * 1000))
        let report: DrillReport
        do { report = try await runner.run(events: events) } catch {
            await resolved.shutdown()
            throw CLIFailure.runtime("drill failed: \(error)")
        }
        await resolved.shutdown()
        if !comparison.json {
            for preflight in report.preflight { StandardStreams.error(PreflightCommand.render(preflight)) }
        }
        StandardStreams.output(comparison.json ? JSONLine.encode(report) : report.rendered())
        if !report.passed { throw ExitCode(1) }
    }
}
