import ArgumentParser
import Composition
import Foundation
import LocalBackend
import Logging
import RealtimeDrill

/// `vortex-realtime drill`: the parity check and the rollback drill.
struct DrillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drill",
        abstract: "Run preflight, the parity check and the rollback drill; exit 0 only when everything matched.",
        discussion: """
            --backend embedded (default) starts the local backend in-process. --backend URL uses a running
            `vortex-realtime serve --admin` at that base URL (http://HOST:PORT), with --token for the drill's user (u-1 in
            the sample directory); --appsync-endpoint, --graphql-endpoint and --admin-endpoint override the derived URLs.
            """
    )

    @Option(help: "embedded, or the base URL of a `serve --admin` backend.")
    var backend = "embedded"

    @Option(help: "Events to publish in each check.")
    var events = 30

    @Option(help: "A JWT for user u-1 (remote backends).")
    var token: String?

    @Option(name: .customLong("appsync-endpoint"), help: "Override: the AppSync HTTP URL (…/event).")
    var appSyncEndpoint: String?

    @Option(name: .customLong("graphql-endpoint"), help: "Override: the GraphQL WebSocket URL.")
    var graphQLEndpoint: String?

    @Option(name: .customLong("admin-endpoint"), help: "Override: the admin base URL (…/vortex).")
    var adminEndpoint: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    func validate() throws {
        guard (3...10_000).contains(events) else { throw ValidationError("--events: between 3 and 10000") }
        if backend != "embedded" {
            guard let url = URL(string: backend), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--backend: expected embedded or http(s)://HOST:PORT")
            }
            guard token != nil else { throw ValidationError("--token: required with a remote --backend") }
        }
    }

    func run() async throws {
        _ = CLILogging.bootstrap(verbose: false, level: .error)
        let drillBackend: any DrillBackend
        if backend == "embedded" {
            do { drillBackend = try await EmbeddedDrillBackend.start() } catch {
                throw CLIFailure.runtime("cannot start the local backend: \(error)")
            }
        } else {
            let base = backend.hasSuffix("/") ? String(backend.dropLast()) : backend
            let wsBase = base.replacingOccurrences(of: "https://", with: "wss://").replacingOccurrences(of: "http://", with: "ws://")
            drillBackend = RemoteDrillBackend(
                endpoints: LocalBackendEndpoints(
                    http: appSyncEndpoint ?? base + "/event", realtime: wsBase + "/event/realtime",
                    graphql: graphQLEndpoint ?? wsBase + "/graphql", admin: adminEndpoint ?? base + "/vortex"),
                token: token ?? "")
        }
        var runner = DrillRunner(backend: drillBackend)
        runner.onProgress = { StandardStreams.error($0) }
        // Preflight first: the drill relies on every GraphQL document and AppSync channel being servable.
        let preflight: [PreflightReport]
        do { preflight = try await runner.runPreflight() } catch {
            await drillBackend.shutdown()
            throw CLIFailure.runtime("preflight failed: \(error)")
        }
        for report in preflight where !json { StandardStreams.error(PreflightCommand.render(report)) }
        guard preflight.allSatisfy(\.passed) else {
            await drillBackend.shutdown()
            if json { StandardStreams.output(JSONLine.encode(["preflight": preflight])) }
            throw CLIFailure.runtime("preflight failed: the drill would not be meaningful (see the report above)")
        }
        let report: DrillReport
        do { report = try await runner.run(events: events) } catch {
            await drillBackend.shutdown()
            throw CLIFailure.runtime("drill failed: \(error)")
        }
        await drillBackend.shutdown()
        StandardStreams.output(json ? JSONLine.encode(report) : report.rendered())
        if !report.passed { throw ExitCode(1) }
    }
}
