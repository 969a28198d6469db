import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import RealtimePreflight
import SubscriberCore
import Testing

/// The drill as staging would run it: a non-sample identity, real endpoints and a token, and no admin endpoint given to
/// the drill. Events come from a command (an in-repo script posting to the local backend's admin endpoint, as a team's
/// own command would make their backend emit an event) or from traffic the test makes (`none`).
@Suite("Drill triggers against the local backend", .serialized, .timeLimit(.minutes(4)))
struct DrillTriggerTests {
    @Test(
        "--trigger command: preflight, parity and the rollback pass; the report says what it could not judge",
        .enabled(if: StagingLikeBackend.hasCurl, "the trigger script posts with curl"))
    func commandTrigger() async throws {
        let backend = try await StagingLikeBackend.start(admin: true)
        let base = try #require(backend.endpoints.admin?.replacingOccurrences(of: "/vortex", with: ""))
        let command = try TriggerCommand(parsing: "'\(StagingLikeBackend.triggerScript)' \(base)")
        var runner = DrillRunner(target: try backend.target(), trigger: .command(command))
        runner.tolerance = 1
        runner.interval = .milliseconds(100)
        let progress = Locked<[String]>([])
        runner.onProgress = { line in progress.withLock { $0.append(line) } }
        let report = try await runner.run(events: 9)
        await backend.stop()
        #expect(report.passed, "\(report.rendered())")
        #expect(report.trigger == "command")
        #expect(report.identity == StagingLikeBackend.identity)
        #expect(report.preflight.count == 2 && report.preflight.allSatisfy(\.passed))
        #expect(report.command == TriggerStatistics(runs: 18, failures: 0, firstFailure: nil))
        let shadow = try #require(report.shadowParity)
        #expect(shadow.matched == 9 && shadow.passed, "\(shadow.rendered())")
        let rollback = try #require(report.rollback)
        #expect(rollback.basis == "observed")
        #expect(rollback.switches.map { "\($0.from)->\($0.to)" } == ["appsync->graphql", "graphql->appsync"])
        #expect(rollback.expected == 9, "\(report.rendered())")
        #expect(rollback.streams.allSatisfy { $0.missingOutsideWindows == 0 && $0.duplicated == 0 })
        let judged = Dictionary(uniqueKeysWithValues: report.judgements.map { ($0.name, $0) })
        #expect(judged["parity"]?.passed == true)
        #expect(judged["losses"]?.passed == true)
        #expect(judged["command"]?.passed == true)
        #expect(judged["allLosses"]?.judged == false)
        #expect(judged["latency"]?.judged == false)
        #expect(progress.withLock { $0 }.contains { $0.contains("running the trigger command 9 times") })
    }

    @Test("--trigger none: natural traffic (made by the test) is judged; the admin endpoint is off")
    func passiveTrigger() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        #expect(backend.endpoints.admin == nil)
        var runner = DrillRunner(target: try backend.target(), trigger: .none)
        runner.tolerance = 1
        runner.passiveDuration = .seconds(3)
        let traffic = naturalTraffic(backend, kinds: DrillScript.story, interval: .milliseconds(150))
        let report = try await runner.run(events: 3)
        traffic.cancel()
        await backend.stop()
        #expect(report.passed, "\(report.rendered())")
        let shadow = try #require(report.shadowParity)
        #expect(shadow.matched > 5 && shadow.passed, "\(shadow.rendered())")
        let rollback = try #require(report.rollback)
        #expect(rollback.switches.count == 2)
        #expect(rollback.expected > 5)
        #expect(report.command == nil)
        let judged = Dictionary(uniqueKeysWithValues: report.judgements.map { ($0.name, $0) })
        #expect(judged["allLosses"]?.judged == false)
        #expect(judged["allLosses"]?.detail.contains("cannot count losses it did not cause") == true)
    }

    @Test("--trigger none without traffic judges nothing, and so does not pass")
    func passiveWithoutTraffic() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        var runner = DrillRunner(target: try backend.target(), trigger: .none)
        runner.passiveDuration = .seconds(3)
        let report = try await runner.run(events: 3)
        await backend.stop()
        #expect(!report.passed)
        #expect(report.judgements.first { $0.name == "parity" }?.judged == false)
        #expect(report.judgements.first { $0.name == "losses" }?.judged == false)
    }

    @Test("a command that fails is reported, and fails the drill")
    func failingCommand() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        var runner = DrillRunner(target: try backend.target(), trigger: .command(try TriggerCommand(parsing: "false")))
        runner.interval = .milliseconds(10)
        runner.tolerance = 0.5
        let report = try await runner.run(events: 3)
        await backend.stop()
        #expect(!report.passed)
        #expect(report.command?.runs == 6 && report.command?.failures == 6)
        #expect(report.judgements.first { $0.name == "command" }?.passed == false)
        #expect(report.command?.firstFailure == "run 1: exit status 1")
    }

    @Test(
        "a command line is split into words without a shell; nothing is expanded",
        arguments: [
            ("trigger.sh a b", ["trigger.sh", "a", "b"]),
            ("  trigger.sh   'two words'  \"and \\\"three\\\"\" ", ["trigger.sh", "two words", "and \"three\""]),
            ("sh -c 'echo $VORTEX_DRILL_SEQUENCE; rm -rf /tmp/x | cat'", ["sh", "-c", "echo $VORTEX_DRILL_SEQUENCE; rm -rf /tmp/x | cat"]),
            ("echo $HOME `id` *;", ["echo", "$HOME", "`id`", "*;"]),
            ("a\\ b ''", ["a b", ""]),
        ] as [(String, [String])])
    func splitting(text: String, words: [String]) throws {
        #expect(try TriggerCommand(parsing: text).words == words)
    }

    @Test("a command line that cannot be read is refused", arguments: ["", "   ", "a 'b", "a \"b", "a\\"])
    func refusedCommandLines(text: String) {
        #expect(throws: TriggerCommand.Problem.self) { try TriggerCommand(parsing: text) }
    }

    @Test("the command gets the drill's variables in its environment, and a timeout ends it")
    func environmentAndTimeout() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("drill-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let command = try TriggerCommand(parsing: "sh -c 'echo \"$VORTEX_DRILL_SEQUENCE $VORTEX_DRILL_USER\" > \"$0\"' '\(file.path)'")
        let run = await command.run(variables: ["VORTEX_DRILL_SEQUENCE": "7", "VORTEX_DRILL_USER": "u-7"])
        #expect(run.succeeded, "\(run)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "7 u-7\n")
        // Killed at the timeout: the shell never reaches the touch (it would, 3 s later, if it were only waited for).
        let finished = FileManager.default.temporaryDirectory.appendingPathComponent("drill-finished-\(UUID().uuidString)")
        var slow = try TriggerCommand(parsing: "sh -c 'sleep 3; touch \"$0\"' '\(finished.path)'")
        slow.timeout = .milliseconds(200)
        let timedOut = await slow.run(variables: [:])
        #expect(!timedOut.succeeded)
        #expect(timedOut.failure?.contains("killed") == true)
        #expect(!FileManager.default.fileExists(atPath: finished.path))
    }
}
