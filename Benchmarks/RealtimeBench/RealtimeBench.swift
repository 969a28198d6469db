// One benchmark client per process, so the orchestrator (Benchmarks/Suite/bench.py) can charge each client's CPU
// to that client alone. Prints one JSON result line on stdout; logs go to stderr.
import ArgumentParser
import Foundation
import Logging

@main
struct RealtimeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "RealtimeBench",
        abstract: "Receive a fixed number of events with one client and print events/s, CPU and RSS as one JSON line.",
        discussion: """
            Normally driven by scripts/bench.sh. Against the firehose: --endpoint http://HOST:PORT/event for AppSync
            Events, ws://HOST:PORT/graphql for graphql-transport-ws. With --latency each event's thingName carries
            its publish time (lat-<unix ns>) and the result holds latency percentiles instead.
            """)

    @Option(help: "bare | appsync | graphql | notifier | store")
    var client: ClientKind

    @Option(help: "appsync | graphql: the stream the bare client and the notifier read (appsync and graphql imply it).")
    var `protocol`: WireProtocol?

    @Option(help: "AppSync: the HTTP endpoint (http://HOST:PORT/event); GraphQL: ws://HOST:PORT/graphql.")
    var endpoint: String

    @Option(help: "Events to receive.")
    var count: Int

    @Option(name: .customLong("api-key"), help: "AppSync API key.")
    var apiKey = "bench-key"

    @Option(help: "Bearer token for GraphQL (a development JWT against `serve`).")
    var token = "bench-token"

    @Option(help: "The AppSync channel of the appsync client.")
    var channel = "default/bench"

    @Option(help: "The notifier's user and organization.")
    var user = "u-1"
    @Option(help: "The notifier's organization.")
    var org = "o-1"

    @Flag(name: .customLong("default-buffers"), help: "Keep the library's default buffer limits (default: above --count).")
    var defaultBuffers = false

    @Option(name: .customLong("rss-every"), help: "Sample RSS every N events (0: never).")
    var rssEvery = 0

    @Flag(help: "Record publish -> consumer latency from thingName lat-<unix ns>.")
    var latency = false

    @Option(help: "Latency samples to discard at the start.")
    var warmup = 0

    @Option(name: .customLong("idle-timeout"), help: "Give up (exit 3) after this many seconds without an event.")
    var idleTimeout: Double = 20

    mutating func validate() throws {
        guard count > 0 else { throw ValidationError("--count: must be positive") }
        switch client {
        case .appsync where `protocol` == .graphql, .graphql where `protocol` == .appsync:
            throw ValidationError("--protocol: the \(client.rawValue) client reads only its own protocol")
        default: break
        }
    }

    var wire: WireProtocol {
        switch client {
        case .appsync: .appsync
        case .graphql: .graphql
        case .bare, .notifier, .store: `protocol` ?? .appsync
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info  // what an app runs with: no debug work on the hot path
            return handler
        }
        let run = BenchRun(options: self)
        let result = try await run.execute()
        result.print()
        if result.stalled { throw ExitCode(3) }
    }
}

/// Which client runs.
enum ClientKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    case bare, appsync, graphql, notifier, store
}

/// Which wire protocol the stream uses.
enum WireProtocol: String, ExpressibleByArgument, CaseIterable, Sendable {
    case appsync, graphql
}
