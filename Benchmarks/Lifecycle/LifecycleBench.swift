// Issue 19's lifecycle figures, measured from outside the transports: how long a link takes to be found dead, to be
// reconnected and to be live again after each lifecycle event, against the local backend at the service's timing
// (`ka` every 60 s, connectionTimeoutMs 300000), with the library's default settings. Also the bare Swift-concurrency
// process the idle measurement (Benchmarks/Suite/idle.py) compares the clients with.
import ArgumentParser
import Composition
import Foundation
import Logging

@main
struct LifecycleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "LifecycleBench",
        abstract: "Measure detection and recovery after lifecycle events, or idle as a bare Swift-concurrency process.",
        discussion: """
            lifecycle: for each transport and scenario, a subscription goes live through a fault-injecting proxy in front
            of an in-process local backend (ka 60 s, connectionTimeoutMs 300000); the scenario's fault is applied, and the
            time from it to the link's end (detected), to the next connection the proxy accepts (reconnected) and to the
            subscription's resumed(gap:) (live again) is printed as a Markdown table. idle: sleeps until killed.
            sessions: --sessions stacks are made, observed until live and shut down (--drop: dropped) against a local
            backend in a child process; the heap in use is printed every --every sessions, with the bytes each session
            kept. backend: the child's side (serves, printing its endpoints).
            """)

    /// What to do.
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case lifecycle, idle, sessions, backend
    }

    @Argument(help: "lifecycle | idle | sessions | backend")
    var mode: Mode = .lifecycle

    @Option(help: "Rounds per transport and scenario.")
    var rounds = 3

    @Option(parsing: .upToNextOption, help: "Scenarios: \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")).")
    var scenarios: [Scenario] = Scenario.allCases

    @Option(parsing: .upToNextOption, help: "Transports: appsync, graphql.")
    var transports: [TransportKind] = TransportKind.allCases

    @Option(help: "sessions: how many stacks to make and end.")
    var sessions = 5_000

    @Option(help: "sessions: read the heap every N sessions.")
    var every = 500

    @Flag(help: "sessions: drop each stack instead of shutting it down.")
    var drop = false

    @Option(help: "sessions: seconds to wait before each reading, for the ended sessions' timers to run out (0: 0.5 s).")
    var settle = 0

    mutating func validate() throws {
        guard sessions > 0 else { throw ValidationError("--sessions: must be positive") }
        guard every > 0 else { throw ValidationError("--every: must be positive") }
    }

    func run() async throws {
        switch mode {
        case .idle:
            // The baseline: the Swift concurrency runtime started, nothing else (one timer a day).
            while true { try await Task.sleep(for: .seconds(86_400)) }
        case .backend:
            try await BackendProcess.serve()
        case .sessions:
            print("| transport | end | sessions | heap in use | bytes kept per session since the previous reading |")
            print("|---|---|---|---|---|")
            for transport in transports {
                let probe = SessionProbe(
                    kind: transport == .appsync ? .appsync : .graphql, sessions: sessions, every: every, drop: drop, settle: settle)
                let readings = try await probe.run()
                for (previous, reading) in zip(readings, readings.dropFirst()) {
                    let kept = SessionProbe.perSession(previous, reading)
                    print(
                        "| \(transport.rawValue) | \(drop ? "dropped" : "shut down") | \(reading.sessions) | \(reading.heapBytes) | \(String(format: "%.0f", kept)) |"
                    )
                }
            }
        case .lifecycle:
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .warning
                return handler
            }
            let runner = try await LifecycleRunner.start()
            var results: [LifecycleResult] = []
            for transport in transports {
                for scenario in scenarios where scenario.applies(to: transport) {
                    for round in 1...max(1, rounds) {
                        let result = try await runner.measure(scenario, on: transport)
                        FileHandle.standardError.write(Data("\(transport.rawValue) \(scenario.rawValue) round \(round): \(result)\n".utf8))
                        results.append(result)
                    }
                }
            }
            await runner.stop()
            print(LifecycleResult.table(results))
        }
    }
}

/// Which transport a scenario runs on.
enum TransportKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    case appsync, graphql
}
