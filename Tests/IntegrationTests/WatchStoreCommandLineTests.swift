import Composition
import Foundation
import LocalBackend
import RealtimeDrill
import RealtimeTesting
import SubscriberCore
import Testing
import VortexVocabulary

/// `watch --store` against a real local backend: the store loads what was published before it started, follows what
/// is published afterwards, and once current prints a line whose `state` equals `GET /vortex/state` (read through the
/// payload models) with nothing stale.
@Suite("vortex-realtime watch --store, end to end", .serialized, .timeLimit(.minutes(3)))
struct WatchStoreCommandLineTests {
    static func device(_ thing: String, online: Bool) -> DomainEvent {
        DomainEvent(
            kind: .devicePresence, orgId: "o-1", deviceGroupId: "g-1",
            payload: ["thingName": .string(thing), "mac": .string("mac-\(thing)"), "online": .bool(online)])
    }

    @Test("watch --store --backfill-endpoint ends on a line equal to GET /vortex/state, nothing stale", arguments: ["appsync", "graphql"])
    func storeEqualsState(transport: String) async throws {
        let binary = try #require(CommandLineTests.executable, "vortex-realtime is not built: run scripts/test.sh")
        try await CommandLinePipeTests.withServer { server, endpoints in
            let token = try DevelopmentToken.make(secret: CommandLinePipeTests.jwtSecret, user: "u-1", ttl: .seconds(600))
            // Published before the watcher starts: only the initial backfill can show these.
            for index in 0..<3 { await server.bus.publish(Self.device("thing-\(index)", online: true)) }
            await server.bus.publish(DomainEvent(kind: .plan, orgId: "o-1", payload: ["isFreePlan": false]))
            await server.bus.publish(DomainEvent(kind: .roleChanged, userId: "u-1", payload: ["reason": "promoted"]))

            // GraphQL documents that select what the backend publishes (timestamps included): the default legacy ones
            // carry neither `timestamp` nor `orgId`, so their values could not equal the backend's state.
            var configuration = RealtimeConfiguration()
            configuration.transport = try #require(RealtimeConfiguration.TransportKind(rawValue: transport))
            configuration.appSyncEndpoint = endpoints.http
            configuration.graphQLEndpoint = endpoints.graphql
            configuration.graphQLOperations = DrillScript.graphQLOperations
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("watch-store-\(UUID().uuidString).json")
            try JSONEncoder().encode(configuration).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let process = Process()
            process.executableURL = binary
            process.arguments = [
                "watch", "--store", "--config", file.path, "--token", token, "--user", "u-1", "--org", "o-1",
                "--backfill-endpoint", endpoints.http,
            ]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let lines = Locked<[String]>([])
            let readOut = output.fileHandleForReading
            let reader = Task {
                try await onOwnThread {
                    var bytes: [UInt8] = []
                    while let byte = try? readOut.read(upToCount: 1)?.first {
                        if byte == UInt8(ascii: "\n") {
                            let line = String(decoding: bytes, as: UTF8.self)
                            lines.withLock { $0.append(line) }
                            bytes = []
                        } else {
                            bytes.append(byte)
                        }
                    }
                }
            }
            let readErr = errors.fileHandleForReading
            let stderrReader = Task { try await onOwnThread { readErr.readDataToEndOfFile() } }
            // Live while it runs: newer values of a loaded device, and a new one.
            try await waitUntil("the first line", timeout: 20) { !lines.withLock { $0.isEmpty } }
            for index in 0..<5 {
                await server.bus.publish(Self.device("thing-\(index % 4)", online: index.isMultiple(of: 2)))
                try await Task.sleep(for: .milliseconds(100))
            }
            let endpoint = try StateEndpoint(base: endpoints.http, organizationId: "o-1", userId: "u-1", authorization: token)
            let reference = try StoreStateDocument.canonical(stateBody: try await endpoint.fetch())
            let expected = #"{"stale":[],"state":"# + reference + "}"
            let matched: Bool
            do {
                try await waitUntil("a current line equal to GET /vortex/state", timeout: 20) {
                    lines.withLock { $0.last.map { (try? Self.normalized($0)) == expected } ?? false }
                }
                matched = true
            } catch {
                matched = false
            }
            process.terminate()
            try await onOwnThread { process.waitUntilExit() }
            _ = try await reader.boundedValue()
            let stderr = String(decoding: try await stderrReader.boundedValue(), as: UTF8.self)
            let last = lines.withLock { $0.last } ?? "none"
            #expect(matched, "last line: \(last)\nexpected: \(expected)\nstderr: \(stderr.suffix(2000))")
            #expect(process.terminationStatus == 0, "\(stderr.suffix(2000))")
        }
    }

    /// The line with its keys sorted, as ``StoreStateDocument`` writes them.
    static func normalized(_ line: String) throws -> String {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
