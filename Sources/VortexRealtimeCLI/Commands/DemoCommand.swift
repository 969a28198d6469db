import ArgumentParser
import Foundation
import LocalBackend
import Logging
import RealtimeDrill
import SubscriberCore

/// `vortex-realtime demo` (also what a bare `swift run vortex-realtime` does): the system doing its job.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Watch a day in the life of a Vortex user arrive live, with a rollback to GraphQL and back.",
        discussion: """
            Starts the embedded local backend, signs in a sample user, builds the notifier through Composition on AppSync
            Events, and publishes a scripted sequence of all nine event kinds at 200 events a second; a third of the way
            through it rolls back to GraphQL through the run-time switch (make-before-break) and later switches back, while
            the events keep flowing (after the first story's worth of values, one value line in 25 is shown). Last, a
            RealtimeStore heals a gap: the app goes to the background, devices change, and on foreground the store's
            backfill (the backend's GET /vortex/state) brings every change in. Ends with a summary: events per stream on
            each transport, anything lost outside the reported switch windows, latency p50/p99, each switch's window as the
            notifier reported it (the same figure on every line), and the store's healed gap.
            Exit status 0 only when everything matched.
            """
    )

    @Option(help: "Rounds of the nine-kind story (10 events each).")
    var rounds = 3

    @Flag(help: "No colour or progress line (the default when stdout is not a terminal).")
    var plain = false

    @Flag(help: "Print only the machine-readable summary.")
    var json = false

    func validate() throws {
        guard (1...100).contains(rounds) else { throw ValidationError("--rounds: between 1 and 100") }
    }

    func run() async throws {
        _ = CLILogging.bootstrap(verbose: false, level: .error)
        let style = TerminalStyle(enabled: !plain && !json && isatty(STDOUT_FILENO) == 1)
        let backend: EmbeddedDrillBackend
        do { backend = try await EmbeddedDrillBackend.start() } catch {
            throw CLIFailure.runtime("cannot start the local backend: \(error)")
        }
        if !json {
            StandardStreams.output(
                style.bold("VortexRealtime demo") + " — local backend at \(backend.endpoints.http), user \(DrillScript.user)")
            StandardStreams.output(
                "Streams of both APIs (nine-method and merged legacy) are shown as values arrive: [published/total], value number, stream, value.\n"
            )
        }
        let events = rounds * DrillScript.story.count
        var runner = DrillRunner(backend: backend)
        let counter = Locked(0)
        let progress = Locked("")
        runner.onPublished = { sent, total in progress.withLock { $0 = "[\(sent)/\(total)]" } }
        runner.onValue = { stream, value in
            guard !json else { return }
            let count = counter.withLock { count in
                count += 1
                return count
            }
            // 200 events a second flow through the switches: after the first story's worth, one value line in 25.
            guard count <= events || count % 25 == 0 else { return }
            let published = progress.withLock { $0 }.padding(toLength: 8, withPad: " ", startingAt: 0)
            StandardStreams.output(
                "\(style.dim(published)) \(style.dim(String(format: "%4d", count))) \(style.stream(stream.padding(toLength: 15, withPad: " ", startingAt: 0))) \(Self.abbreviate(value))"
            )
        }
        runner.onProgress = { line in
            guard !json else { return }
            StandardStreams.output(style.highlight("▶ " + line))
        }
        let report: DrillReport
        let store: StoreHealingReport
        do {
            let rollback = try await runner.runRollback(events: events, interval: .milliseconds(5))
            if !json { StandardStreams.output(style.highlight("▶ parity: the same events on AppSync Events and on GraphQL side by side")) }
            var quiet = runner
            quiet.onValue = { _, _ in }
            let parity = try await quiet.runParity(events: events)
            report = DrillReport(parity: parity, rollback: rollback)
            if !json {
                StandardStreams.output(
                    style.highlight("▶ store: the app goes to the background, every device changes, the store heals the gap"))
            }
            store = try await quiet.runStoreHealing()
        } catch {
            await backend.shutdown()
            throw CLIFailure.runtime("demo failed: \(error)")
        }
        await backend.shutdown()
        let summary = DemoSummary(report: report, store: store)
        if json {
            StandardStreams.output(JSONLine.encode(summary))
        } else {
            StandardStreams.output(
                ("\n" + report.rendered() + "\n" + store.rendered()).replacingOccurrences(of: "PASSED", with: style.good("PASSED"))
                    .replacingOccurrences(of: "FAILED", with: style.bad("FAILED")))
        }
        if !summary.passed { throw ExitCode(1) }
    }

    static func abbreviate(_ json: String) -> String { json.count > 110 ? String(json.prefix(107)) + "..." : json }
}

/// The `--json` summary.
struct DemoSummary: Encodable {
    let passed: Bool
    let report: DrillReport
    /// The store phase: a gap healed by the store's backfill.
    let store: StoreHealingReport
    init(report: DrillReport, store: StoreHealingReport) {
        self.passed = report.passed && store.passed
        self.report = report
        self.store = store
    }
}

/// ANSI styling when writing to a terminal.
struct TerminalStyle: Sendable {
    let enabled: Bool
    private func wrap(_ code: String, _ text: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    func bold(_ text: String) -> String { wrap("1", text) }
    func dim(_ text: String) -> String { wrap("2", text) }
    func stream(_ text: String) -> String { wrap("36", text) }
    func highlight(_ text: String) -> String { wrap("1;33", text) }
    func good(_ text: String) -> String { wrap("1;32", text) }
    func bad(_ text: String) -> String { wrap("1;31", text) }
}
