import Foundation
import LocalBackend
import RealtimeTesting
import Testing
import VortexVocabulary

/// `tail` against a real local backend: a closed stdout ends it quietly, and GraphQL lines are the `data` object.
@Suite("vortex-realtime tail, end to end", .serialized, .timeLimit(.minutes(3)))
struct CommandLinePipeTests {
    static let apiKey = "da2-cli-test-key"
    static let jwtSecret = "cli-test-jwt-secret-of-32-bytes-or-more"

    /// Starts a backend, runs `body`, stops the backend.
    static func withServer(_ body: (LocalBackendServer, LocalBackendEndpoints) async throws -> Void) async throws {
        var configuration = LocalBackendConfiguration()
        configuration.apiKeys = [apiKey]
        configuration.jwtSecret = jwtSecret
        let server = LocalBackendServer(configuration: configuration)
        let endpoints = try await server.start()
        do {
            try await body(server, endpoints)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Publishes an event every 100 ms while `process` runs (a subscription that is not live yet just misses some),
    /// for at most `limit` publishes; returns whether the process ended.
    static func publishWhileRunning(_ process: Process, limit: Int = 600, publish: (Int) async -> Void) async throws -> Bool {
        for index in 0..<limit where process.isRunning {
            await publish(index)
            try await Task.sleep(for: .milliseconds(100))
        }
        return !process.isRunning
    }

    @Test("tail … | head -1 prints one event and ends quietly (exit 0 or 141, no crash, no backtrace)")
    func closedStdout() async throws {
        let binary = try #require(CommandLineTests.executable, "vortex-realtime is not built: run scripts/test.sh")
        try await Self.withServer { server, endpoints in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-pipe-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let stderrFile = directory.appendingPathComponent("stderr")
            let statusFile = directory.appendingPathComponent("status")
            // The user's pipeline, with tail's own exit status kept (PIPESTATUS), not head's.
            let script =
                #""$0" tail --endpoint "$1" --api-key "$2" --channel default/pipe 2>"$3" | head -n 1; echo "${PIPESTATUS[0]}" >"$4""#
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", script, binary.path, endpoints.http, Self.apiKey, stderrFile.path, statusFile.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let ended = try await Self.publishWhileRunning(process) { index in
                await server.bus.publish(channel: "default/pipe", events: [#"{"n":\#(index)}"#])
            }
            if !ended { process.terminate() }
            try await onOwnThread { process.waitUntilExit() }
            #expect(ended, "tail kept running after its reader went away")
            let readOut = output.fileHandleForReading
            let stdout = String(decoding: try await onOwnThread { readOut.readDataToEndOfFile() }, as: UTF8.self)
            let stderr = readTextFile(stderrFile)
            let status = readTextFile(statusFile).trimmingCharacters(in: .whitespacesAndNewlines)
            let lines = stdout.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.hasPrefix(#"{"channel":"default/pipe","event":{"n":"#) == true, "\(stdout)")
            #expect(status == "0" || status == "141", "tail's exit status \(status.isEmpty ? "missing" : status); stderr: \(stderr)")
            #expect(!stderr.contains("Fatal error"), "\(stderr)")
            #expect(!stderr.contains("Broken pipe"), "\(stderr)")
            #expect(!stderr.contains("Backtrac"), "\(stderr)")
        }
    }

    @Test(
        "tail --transport graphql prints the data object as sent: {\"<alias or field>\":{…}}",
        arguments: [
            (#"subscription { subscribeRoleChange(userId: "u-1") { reason eventType } }"#, nil as String?, "subscribeRoleChange"),
            (#"subscription Roles { changes: subscribeRoleChange(userId: "u-1") { reason } }"#, "Roles", "changes"),
            (
                #"# a comment { x }"# + "\n"
                    + #"query Other { health } subscription Roles($u: String! = "u-1") { subscribeRoleChange(userId: $u) { reason } }"#,
                "Roles", "subscribeRoleChange"
            ),
        ])
    func graphQLDataObject(query: String, operationName: String?, key: String) async throws {
        let binary = try #require(CommandLineTests.executable, "vortex-realtime is not built: run scripts/test.sh")
        try await Self.withServer { server, endpoints in
            let token = try DevelopmentToken.make(secret: Self.jwtSecret, user: "u-1", ttl: .seconds(600))
            let process = Process()
            process.executableURL = binary
            process.arguments =
                ["tail", "--transport", "graphql", "--endpoint", endpoints.graphql, "--token", token, "--query", query]
                + (operationName.map { ["--operation-name", $0] } ?? [])
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // Read the first line on a thread of its own: the read blocks.
            let readOut = output.fileHandleForReading
            async let firstLine = onOwnThread { () -> String in
                var bytes: [UInt8] = []
                while let byte = try? readOut.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { bytes.append(byte) }
                return String(decoding: bytes, as: UTF8.self)
            }
            // Publish until the line arrives (the subscription is live only some time after start).
            let reader = Task {
                for _ in 0..<600 where process.isRunning {
                    await server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "promoted"]))
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            let line = try await firstLine
            reader.cancel()
            process.terminate()
            try await onOwnThread { process.waitUntilExit() }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "line: \(line)")
            #expect(Array(object.keys) == [key], "\(line)")
            let value = try #require(object[key] as? [String: Any], "\(line)")
            #expect(value["reason"] as? String == "promoted")
            #expect(object["data"] == nil)
            #expect(process.terminationStatus == 0, "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        }
    }
}
