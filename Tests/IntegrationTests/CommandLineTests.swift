import Foundation
import RealtimeTesting
import Testing

/// The built `vortex-realtime` binary, end to end (scripts/test.sh builds every product before testing).
@Suite("vortex-realtime command line", .serialized, .timeLimit(.minutes(3)))
struct CommandLineTests {
    /// The executable next to the test bundle, or `nil` when it was not built.
    static var executable: URL? {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory, directory.deletingLastPathComponent()].map { $0.appendingPathComponent("vortex-realtime") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the binary with `arguments`, and `environment` over this process's variables.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        let binary = try #require(executable, "vortex-realtime is not built: run scripts/test.sh (it builds every product)")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let readOut = output.fileHandleForReading
        let readErr = errors.fileHandleForReading
        let (out, err): (Data, Data)
        do {
            (out, err) = try await withTestTimeout(150, "vortex-realtime \(arguments.first ?? "") to end") {
                // Both pipes drain on threads of their own (a full stderr pipe must not block the child).
                async let stdout = onOwnThread { readOut.readDataToEndOfFile() }
                async let stderr = onOwnThread { readErr.readDataToEndOfFile() }
                return try await (stdout, stderr)
            }
        } catch {
            process.terminate()  // a command that does not end fails its test and does not outlive it
            throw error
        }
        try await onOwnThread { process.waitUntilExit() }
        return Result(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    @Test("demo --json runs the whole story on the embedded backend and reports that everything matched")
    func demoSummary() async throws {
        let result = try await Self.run(["demo", "--json", "--rounds", "1"])
        #expect(result.status == 0, "demo failed: \(result.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(summary["passed"] as? Bool == true)
        let report = try #require(summary["report"] as? [String: Any])
        let parity = try #require((report["parity"] as? [String: Any])?["streams"] as? [[String: Any]])
        #expect(parity.count == 11)
        #expect(parity.allSatisfy { $0["identical"] as? Bool == true && ($0["published"] as? Int ?? 0) > 0 })
        let rollback = try #require(report["rollback"] as? [String: Any])
        #expect((rollback["switches"] as? [[String: Any]])?.count == 2)
        #expect(
            (rollback["streams"] as? [[String: Any]])?.allSatisfy {
                $0["missingOutsideWindows"] as? Int == 0 && $0["duplicated"] as? Int == 0
            } == true)
    }

    @Test("tail against a port nobody listens on: each reconnecting state says why, and the policy's limit ends it (exit 1)")
    func tailSaysWhy() async throws {
        let result = try await Self.run([
            "tail", "--transport", "graphql", "--endpoint", "ws://127.0.0.1:9/graphql", "--token", "t", "--query",
            "subscription { health }", "--reconnect", "fixed:0.1:attempts=2",
        ])
        #expect(result.status == 1, "\(result.stderr)")
        let reconnecting = result.stderr.split(separator: "\n").filter { $0.hasPrefix("state: reconnecting") }
        #expect(!reconnecting.isEmpty, "\(result.stderr)")
        #expect(reconnecting.allSatisfy { $0.contains("(last failure: open failed: ") }, "\(result.stderr)")
    }

    @Test(
        "bad arguments: one line on stderr naming the argument, exit status 2",
        arguments: [
            (["tail", "--endpoint", "http://example.com/event", "--token", "t", "--channel", "a/b"], "--endpoint"),
            (
                [
                    "publish", "--endpoint", "https://a.appsync-api.us-east-1.amazonaws.com/event", "--api-key", "k", "--channel", "a/*",
                    "1",
                ], "--channel"
            ),
            (
                [
                    "tail", "--endpoint", "https://a.appsync-api.us-east-1.amazonaws.com/event", "--token", "t", "--channel", "a/b",
                    "--reconnect", "x",
                ], "--reconnect"
            ),
            (["serve", "--port", "70000"], "--port"),
            (["serve", "--namespace", "-bad"], "--namespace"),
            (["serve", "--tls-certificate", "/nonexistent/chain.pem"], "--tls-certificate"),
            (["serve", "--tls-certificate", "/nonexistent/chain.pem", "--tls-key", "/nonexistent/key.pem"], "--tls-certificate"),
            (["serve", "--tls-certificate", "/etc/passwd", "--tls-key", "/nonexistent/key.pem"], "--tls-key"),
            (
                [
                    "tail", "--endpoint", "https://a.appsync-api.us-east-1.amazonaws.com/event", "--token", "t", "--channel",
                    "default/-bad-",
                ], "--channel"
            ),
            (
                [
                    "tail", "--transport", "graphql", "--endpoint", "ws://127.0.0.1:9/graphql", "--token", "t", "--query",
                    "query { health }",
                ], "--query"
            ),
            (
                [
                    "tail", "--transport", "graphql", "--endpoint", "ws://127.0.0.1:9/graphql", "--token", "t", "--query",
                    "subscription { ...F }",
                ], "--query"
            ),
            (["token", "--secret", "short", "--user", "u-1"], "--secret"),
            (["drill", "--events", "1"], "--events"),
            (
                ["watch", "--transport", "appsync", "--endpoint", "http://127.0.0.1:9/event", "--token", "t", "--user", "u", "--store"],
                "--org"
            ),
            (
                [
                    "watch", "--transport", "appsync", "--endpoint", "http://127.0.0.1:9/event", "--token", "t", "--user", "u",
                    "--backfill-endpoint", "http://127.0.0.1:9",
                ], "--backfill-endpoint"
            ),
            (
                [
                    "watch", "--transport", "appsync", "--endpoint", "http://127.0.0.1:9/event", "--token", "t", "--user", "u", "--org",
                    "o", "--store", "--backfill-endpoint", "ftp://x",
                ], "--backfill-endpoint"
            ),
        ])
    func badArguments(arguments: [String], argument: String) async throws {
        let result = try await Self.run(arguments)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "expected one line, got \(result.stderr)")
        #expect(result.stderr.contains(argument))
    }

    @Test(
        "a bad VORTEX_REALTIME_* variable is named as such, beside a good --config file, by every command that reads both",
        arguments: [
            ["preflight", "--transport", "graphql", "--endpoint", "ws://127.0.0.1:1/graphql", "--token", "t", "--user", "u", "--org", "o"],
            [
                "parity", "--appsync-endpoint", "http://127.0.0.1:1/event", "--graphql-endpoint", "ws://127.0.0.1:1/graphql", "--token",
                "t", "--user", "u",
            ],
            [
                "drill", "--appsync-endpoint", "http://127.0.0.1:1/event", "--graphql-endpoint", "ws://127.0.0.1:1/graphql", "--token", "t",
                "--user", "u", "--trigger", "none",
            ],
        ])
    func badEnvironmentVariable(arguments: [String]) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vortex-cli-\(UUID().uuidString).json")
        try Data("{}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await Self.run(arguments + ["--config", file.path], environment: ["VORTEX_REALTIME_TRANSPORT": "bogus"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("VORTEX_REALTIME_*"), "\(result.stderr)")
        #expect(!result.stderr.contains(file.path), "the good file is not the bad argument: \(result.stderr)")
    }

    @Test("token prints a JWT the local backend accepts (three base64url parts, sub = the user)")
    func token() async throws {
        let result = try await Self.run(["token", "--secret", String(repeating: "s", count: 32), "--user", "u-9", "--ttl", "60"])
        #expect(result.status == 0)
        let parts = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
        #expect(parts.count == 3)
        var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let decoded = try #require(Data(base64Encoded: payload))
        let claims = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        #expect(claims["sub"] as? String == "u-9")
    }
}
