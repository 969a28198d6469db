import ArgumentParser
import BackendNotifier
import Composition
import Foundation
import Logging
import RealtimePreflight
import SubscriberCore

/// `vortex-realtime preflight`: checks that a server can serve every upstream the notifier will ask of it.
struct PreflightCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preflight",
        abstract: "Check a server before a rollback or a flip; exit 0 only when everything checks out.",
        discussion: """
            GraphQL: connects with the connection_init payload (graphQLConnectionPayload of --config or the environment, or
            the default) and reports connection_ack or the refusal with its close code; reads the server's schema by
            introspection and checks every document the notifier would send (the configured graphQLOperations of --config,
            or the default documents), naming each missing operation, argument or field, and each variable whose type does
            not fit its argument or cannot hold the identity the notifier sends. AppSync: confirms the five channels of
            --user subscribe. Exit status 0 when everything checks out, 1 otherwise, 2 for bad arguments.
            """
    )

    @Option(help: "graphql or appsync.")
    var transport: RealtimeConfiguration.TransportKind

    @Option(help: "The GraphQL ws(s):// URL, or the AppSync HTTP URL ending in /event.")
    var endpoint: String

    @OptionGroup var credentials: CredentialOptions

    @OptionGroup var identity: IdentityOptions

    @Option(help: "A JSON configuration file (its graphQLOperations are the documents checked).")
    var config: String?

    @Option(help: "Seconds each check may take.")
    var timeout: Double = 10

    @Flag(help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        try credentials.requireExactlyOne(iam: false)
        try identity.require(user: true, org: true)
        guard timeout > 0 else { throw ValidationError("--timeout: must be positive") }
    }

    func run() async throws {
        let logger = CLILogging.bootstrap(verbose: false, level: .error)
        // VORTEX_REALTIME_* (graphQLConnectionPayload among them) as the app reads them; the options below win.
        var base = try RealtimeConfiguration.loadForCommandLine(config: config)
        base.transport = transport
        base.failover.enabled = false
        if transport == .appsync { base.appSyncEndpoint = endpoint } else { base.graphQLEndpoint = endpoint }
        credentials.apply(to: &base)
        do { try base.validate() } catch {
            throw CLIFailure.badArgument(config == nil ? "--endpoint" : "--config", "\(error)")
        }
        var preflight = RealtimePreflight(
            configuration: base, auth: StaticAuthSession(try credentials.credentials()), userId: identity.user ?? "",
            organizationId: identity.org, logger: logger)
        preflight.timeout = .milliseconds(Int64(timeout * 1000))
        let report = await preflight.run(transport)
        StandardStreams.output(json ? JSONLine.encode(report) : Self.render(report))
        if !report.passed { throw ExitCode(1) }
    }

    /// One line per check, then the problems indented.
    static func render(_ report: PreflightReport) -> String {
        var lines = ["preflight \(report.transport): \(report.passed ? "passed" : "FAILED")"]
        for check in report.checks {
            lines.append("  \(check.passed ? "ok  " : "FAIL") \(check.name)")
            for problem in check.problems { lines.append("         \(problem)") }
        }
        return lines.joined(separator: "\n")
    }
}
