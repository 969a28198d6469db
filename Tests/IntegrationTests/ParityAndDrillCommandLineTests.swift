import Foundation
import LocalBackend
import RealtimeDrill
import Testing
import VortexVocabulary

/// `vortex-realtime parity` and `drill` as a team runs them against staging, here the local backend with a non-sample
/// identity: the built binary, its exit status and its JSON.
@Suite("parity and drill on the command line", .serialized, .timeLimit(.minutes(4)))
struct ParityAndDrillCommandLineTests {
    static func endpointArguments(_ backend: StagingLikeBackend) throws -> [String] {
        [
            "--appsync-endpoint", backend.endpoints.http, "--graphql-endpoint", backend.endpoints.graphql, "--token", try backend.token(),
            "--user", "u-7", "--org", "o-7", "--device-group", "g-7",
        ]
    }

    @Test("parity --json against real endpoints: a one-sided event makes exit status 1, and the JSON says which")
    func parityOneSided() async throws {
        let backend = try await StagingLikeBackend.start(admin: false)
        let traffic = Task {
            var index = 0
            while !Task.isCancelled {
                await backend.publish(index, DrillScript.story[index % DrillScript.story.count])
                if index % 4 == 3 {
                    _ = await backend.server.bus.publish(
                        DomainEvent(kind: .roleChanged, userId: "u-7", payload: ["reason": .string("appsync only \(index)")]),
                        on: [.appSyncEvents])
                }
                index += 1
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let result = try await CommandLineTests.run(
            ["parity", "--json", "--duration", "4", "--tolerance", "1"] + Self.endpointArguments(backend))
        traffic.cancel()
        await backend.stop()
        #expect(result.status == 1, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect((report["matched"] as? Int ?? 0) > 0)
        #expect((report["onlyAppSync"] as? Int ?? 0) > 0)
        #expect(report["onlyGraphQL"] as? Int == 0)
        #expect(report["different"] as? Int == 0)
        #expect(report["gaps"] as? [String: Int] == ["appsync": 0, "graphql": 0])
        let events = try #require(report["events"] as? [String: Any])
        let onlyAppSync = try #require(events["onlyAppSync"] as? [[String: Any]])
        let unexpected = onlyAppSync.filter { (($0["value"] as? [String: Any])?["reason"] as? String)?.hasPrefix("appsync only") != true }
        #expect(unexpected.isEmpty, "AppSync-only events that were published on both protocols: \(unexpected)\n\(result.stderr)")
        let token = try backend.token()
        #expect(!result.stdout.contains(token) && !result.stderr.contains(token))
    }

    @Test(
        "drill --trigger command:… --json against real endpoints, no admin endpoint given to the drill: exit status 0",
        .enabled(if: StagingLikeBackend.hasCurl, "the trigger script posts with curl"))
    func drillWithCommand() async throws {
        let backend = try await StagingLikeBackend.start(admin: true)
        let base = try #require(backend.endpoints.admin?.replacingOccurrences(of: "/vortex", with: ""))
        let result = try await CommandLineTests.run(
            [
                "drill", "--json", "--trigger", "command:\(StagingLikeBackend.triggerScript) \(base)", "--events", "6", "--interval", "100",
                "--tolerance", "1",
            ] + Self.endpointArguments(backend))
        await backend.stop()
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(report["passed"] as? Bool == true)
        #expect(report["trigger"] as? String == "command")
        #expect((report["identity"] as? [String: Any])?["user"] as? String == "u-7")
        #expect((report["shadowParity"] as? [String: Any])?["matched"] as? Int == 6)
        #expect((report["command"] as? [String: Any])?["runs"] as? Int == 12)
        let judgements = try #require(report["judgements"] as? [[String: Any]])
        #expect(judgements.contains { $0["name"] as? String == "allLosses" && $0["judged"] as? Bool == false })
        let token = try backend.token()
        #expect(!result.stdout.contains(token) && !result.stderr.contains(token))
    }

    @Test("demo: the progress line and the summary state the same window for each switch")
    func demoWindowsAgree() async throws {
        let result = try await CommandLineTests.run(["demo", "--plain", "--rounds", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for (from, to) in [("appsync", "graphql"), ("graphql", "appsync")] {
            let figures = WindowFiguresTests.figures(lines, from, to)
            #expect(figures.count == 2, "\(from) -> \(to): \(lines.filter { $0.contains("switch") })")
            #expect(Set(figures).count == 1, "the demo's lines disagree about \(from) -> \(to): \(figures)")
        }
    }

    @Test(
        "bad arguments name the argument and exit 2",
        arguments: [
            (
                [
                    "drill", "--appsync-endpoint", "http://127.0.0.1:1/event", "--graphql-endpoint", "ws://127.0.0.1:1/graphql", "--token",
                    "t", "--user", "u",
                ], "--trigger"
            ),
            (
                [
                    "drill", "--appsync-endpoint", "http://127.0.0.1:1/event", "--graphql-endpoint", "ws://127.0.0.1:1/graphql", "--token",
                    "t",
                    "--user", "u", "--trigger", "admin",
                ], "--trigger"
            ),
            (["drill", "--trigger", "command:/no/such/program --flag"], "--trigger"),
            (["drill", "--trigger", "command:trigger 'unterminated"], "--trigger"),
            (["drill", "--trigger", "sometimes"], "--trigger"),
            (
                [
                    "drill", "--appsync-endpoint", "http://127.0.0.1:1/event", "--graphql-endpoint", "ws://127.0.0.1:1/graphql", "--user",
                    "u", "--trigger", "none",
                ], "--token"
            ),
            (["parity", "--tolerance", "-1"], "--tolerance"),
            (["parity", "--token", "t"], "--token"),
            (["parity", "--user", "u-99"], "--user"),
            (["parity", "--appsync-endpoint", "http://127.0.0.1:1/event", "--token", "t", "--user", "u"], "--graphql-endpoint"),
        ] as [([String], String)])
    func badArguments(arguments: [String], named: String) async throws {
        let result = try await CommandLineTests.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains(named) == true, "\(result.stderr)")
    }
}
