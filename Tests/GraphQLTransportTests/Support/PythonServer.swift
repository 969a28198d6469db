// Foundation's Process exists only where a test can spawn a Python interpreter.
#if os(macOS) || os(Linux)
import Foundation
import RealtimeTesting
import SubscriberCore
import WebSocketNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The strawberry-graphql peer: `Tests/PythonPeers/strawberry_server.py` (strawberry on uvicorn), run with
/// `$VORTEX_PYTHON` or `python3` from `PATH`. Its versions are pinned in `Tests/PythonPeers/requirements.txt`.
enum StrawberryPeer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The token every server started here accepts in `connection_init` (unless a test gives another).
    static let token = "strawberry-token"

    /// The Python interpreter to run.
    static let python: String = {
        let configured = ProcessInfo.processInfo.environment["VORTEX_PYTHON"] ?? ""
        return configured.isEmpty ? "python3" : configured
    }()

    /// The server script, found relative to this file so it works from any working directory.
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // GraphQLTransportTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("PythonPeers")
        .appendingPathComponent("strawberry_server.py")

    /// CI (any non-empty `CI`) or `VORTEX_REQUIRE_PEERS=1` demands the peer: a missing strawberry then fails.
    static let isRequired: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["CI"] ?? "").isEmpty || environment["VORTEX_REQUIRE_PEERS"] == "1"
    }()

    /// The peer's versions (JSON) when the script can import strawberry and uvicorn, or why it cannot.
    /// Probed once per test run.
    static let availability: Result<String, Failure> = {
        do {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [python, script.path, "--check"]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // `--check` prints one short line to each pipe at most, far below a pipe's capacity.
            process.waitUntilExit()
            let versions = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let reason = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationStatus == 0, versions.hasPrefix("{") else {
                return .failure(Failure(description: "\(python) \(script.path) --check exited \(process.terminationStatus): \(reason)"))
            }
            return .success(versions)
        } catch {
            return .failure(Failure(description: "could not launch \(python): \(error)"))
        }
    }()

    /// Whether the conformance tests run. When strawberry is missing and the peer is not required they are skipped
    /// (reported as skipped, never passed); when it is required they run and fail loudly.
    static var shouldRun: Bool {
        if case .success = availability { return true }
        return isRequired
    }

    /// Throws, with the reason and the fix, when the peer cannot run.
    static func requireAvailable() throws {
        if case .failure(let failure) = availability {
            throw Failure(
                description: "strawberry peer unavailable (required because CI or VORTEX_REQUIRE_PEERS=1 is set): \(failure). "
                    + "Install it with: \(python) -m pip install -r Tests/PythonPeers/requirements.txt")
        }
    }
}

/// One running `strawberry_server.py` process.
///
/// Start it with ``withStrawberryServer(port:token:initTimeoutMilliseconds:_:)``, which stops it however the body
/// ends. As a last resort the script exits by itself when the test process that started it is gone.
final class PythonServer: Sendable {
    /// The port it listens on (127.0.0.1).
    let port: Int
    /// The token its `on_ws_connect` accepts.
    let token: String
    private let process: Process
    private let stdoutURL: URL
    private let stderrURL: URL

    /// `ws://127.0.0.1:PORT/graphql`.
    var url: URL { URL(string: urlText)! }
    var urlText: String { "ws://127.0.0.1:\(port)/graphql" }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    private init(port: Int, token: String, process: Process, stdoutURL: URL, stderrURL: URL) {
        self.port = port
        self.token = token
        self.process = process
        self.stdoutURL = stdoutURL
        self.stderrURL = stderrURL
    }

    /// Launches the server and returns once it accepts TCP connections.
    ///
    /// - Parameters:
    ///   - port: The port to listen on; 0 lets the server pick a free one.
    ///   - token: The `Authorization` value `connection_init` must carry.
    ///   - initTimeoutMilliseconds: strawberry's `connection_init_wait_timeout` (default: 60 s).
    static func start(port: Int = 0, token: String = StrawberryPeer.token, initTimeoutMilliseconds: Int? = nil) async throws -> PythonServer
    {
        try StrawberryPeer.requireAvailable()
        let stem = FileManager.default.temporaryDirectory.appendingPathComponent("strawberry-\(UUID().uuidString)")
        let stdoutURL = stem.appendingPathExtension("stdout")
        let stderrURL = stem.appendingPathExtension("stderr")
        // Files, not pipes: nobody reads the server's output after the first line, and a full pipe would block it.
        guard FileManager.default.createFile(atPath: stdoutURL.path, contents: nil),
            FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        else { throw StrawberryPeer.Failure(description: "cannot create \(stem.path).stdout/.stderr") }
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? stdout.close()
            try? stderr.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // --parent-pid: the server exits by itself if this test process dies without stopping it.
        var arguments = [
            StrawberryPeer.python, StrawberryPeer.script.path, "--port", "\(port)", "--token", token,
            "--parent-pid", "\(ProcessInfo.processInfo.processIdentifier)",
        ]
        if let initTimeoutMilliseconds { arguments += ["--init-timeout-ms", "\(initTimeoutMilliseconds)"] }
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
            throw StrawberryPeer.Failure(description: "could not launch \(StrawberryPeer.python): \(error)")
        }

        do {
            let chosen = try await readPort(stdoutURL: stdoutURL, stderrURL: stderrURL, process: process)
            let server = PythonServer(port: chosen, token: token, process: process, stdoutURL: stdoutURL, stderrURL: stderrURL)
            try await server.waitUntilAccepting()
            return server
        } catch {
            await PythonServer.terminate(process)
            let errors = readTextFile(stderrURL)
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
            throw StrawberryPeer.Failure(description: "strawberry server did not start: \(error)\n\(Self.tail(errors))")
        }
    }

    /// The first stdout line, `{"port": N}`.
    private static func readPort(stdoutURL: URL, stderrURL: URL, process: Process) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = readTextFile(stdoutURL)
            if let newline = text.firstIndex(of: "\n") {
                let line = Data(text[..<newline].utf8)
                struct PortLine: Decodable { var port: Int }
                guard let decoded = try? JSONDecoder().decode(PortLine.self, from: line), decoded.port > 0 else {
                    throw StrawberryPeer.Failure(description: "unexpected first line \(String(decoding: line, as: UTF8.self))")
                }
                return decoded.port
            }
            if !process.isRunning {
                throw StrawberryPeer.Failure(description: "exited with status \(process.terminationStatus) before printing its port")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw StrawberryPeer.Failure(description: "no port line within 30 s")
    }

    private func waitUntilAccepting() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if Self.acceptsTCP(port: port) { return }
            guard process.isRunning else {
                throw StrawberryPeer.Failure(description: "exited with status \(process.terminationStatus) before listening on \(port)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw StrawberryPeer.Failure(description: "nothing listening on 127.0.0.1:\(port) within 30 s")
    }

    /// Whether a TCP connection to 127.0.0.1:`port` succeeds right now.
    static func acceptsTCP(port: Int) -> Bool {
        #if os(Linux)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { _ = shutdownAndClose(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    private static func shutdownAndClose(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        return Glibc.close(descriptor)
        #else
        return Darwin.close(descriptor)
        #endif
    }

    /// What the server wrote to stderr so far (its last lines).
    var stderrTail: String { Self.tail(readTextFile(stderrURL)) }

    private static func tail(_ text: String, lines: Int = 30) -> String {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
        return all.suffix(lines).joined(separator: "\n")
    }

    /// Stops the server: SIGTERM (uvicorn's graceful shutdown, closing sockets with 1012), then SIGKILL after a grace
    /// period. Works in a cancelled task too. Idempotent.
    func stop() async {
        await Self.terminate(process)
        try? FileManager.default.removeItem(at: stdoutURL)
        try? FileManager.default.removeItem(at: stderrURL)
    }

    /// Kills the server at once (SIGKILL): its sockets end without a close frame, as when a server crashes.
    func kill() async {
        if process.isRunning { _ = sendSignal(process.processIdentifier, SIGKILL) }
        _ = await Self.waitForExit(process, within: .seconds(10))
    }

    private static func terminate(_ process: Process) async {
        guard process.isRunning else { return }
        process.terminate()
        if await waitForExit(process, within: .seconds(3)) { return }
        _ = sendSignal(process.processIdentifier, SIGKILL)
        _ = await waitForExit(process, within: .seconds(10))
    }

    /// Waits for the process to exit; `false` if it still runs after `limit`. Not cut short by task cancellation,
    /// so a cancelled test still stops its server.
    private static func waitForExit(_ process: Process, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return false }
            await uncancellableSleep(milliseconds: 10)
        }
        return true
    }

    private static func uncancellableSleep(milliseconds: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
        }
    }
}

private func sendSignal(_ pid: Int32, _ signal: Int32) -> Int32 {
    kill(pid, signal)
}

/// Runs `body` with a freshly started strawberry server and stops the server however `body` ends (returning,
/// throwing, or cancelled by a time limit). A thrown error carries the tail of the server's stderr.
func withStrawberryServer<T>(
    port: Int = 0,
    token: String = StrawberryPeer.token,
    initTimeoutMilliseconds: Int? = nil,
    _ body: (PythonServer) async throws -> T
) async throws -> T {
    let server = try await PythonServer.start(port: port, token: token, initTimeoutMilliseconds: initTimeoutMilliseconds)
    let result: Result<T, any Error>
    do {
        result = .success(try await body(server))
    } catch {
        result = .failure(PeerScopedFailure(underlying: error, serverStderr: server.stderrTail))
    }
    await server.stop()
    return try result.get()
}

/// An error from inside ``withStrawberryServer(port:token:initTimeoutMilliseconds:_:)``, with what the server logged.
struct PeerScopedFailure: Error, CustomStringConvertible {
    var underlying: any Error
    var serverStderr: String
    var description: String {
        serverStderr.isEmpty ? "\(underlying)" : "\(underlying)\n--- strawberry server stderr (tail) ---\n\(serverStderr)"
    }
}

// MARK: - Observing the server

/// What the server's recording middleware saw (every WebSocket connection except the observers' own).
struct StrawberryStats: Decodable, Sendable, CustomStringConvertible {
    /// One frame or close event on one connection.
    struct Entry: Decodable, Sendable, Equatable {
        /// The connection number (from 1, in order of acceptance).
        var conn: Int
        /// `in` (from the client) or `out` (from the server).
        var direction: String
        /// The frame's `type`; `<malformed>`, `<binary>`, `<close>` (the server's close) or `<disconnect>` (the end
        /// of the connection as the server saw it).
        var type: String?
        var id: String?
        /// `connection_init`'s `payload.Authorization`.
        var authorization: String?
        /// The close code of `<close>` and `<disconnect>`.
        var code: Int?
    }

    /// Connections still open.
    var open: [Int]
    /// `ticker` resolvers still running.
    var tickers: Int
    var log: [Entry]

    /// The connections that sent a `connection_init`, in order.
    var initializedConnections: [Int] {
        log.filter { $0.direction == "in" && $0.type == "connection_init" }.map(\.conn)
    }

    /// The entries of one connection.
    func entries(of connection: Int) -> [Entry] { log.filter { $0.conn == connection } }

    /// The connection that sent `subscribe` with `id` first.
    func connection(subscribing id: String) -> Int? {
        log.first { $0.direction == "in" && $0.type == "subscribe" && $0.id == id }?.conn
    }

    var description: String {
        let lines = log.map { entry in
            "#\(entry.conn) \(entry.direction) \(entry.type ?? "nil")"
                + (entry.id.map { " id=\($0)" } ?? "") + (entry.authorization.map { " auth=\($0)" } ?? "")
                + (entry.code.map { " code=\($0)" } ?? "")
        }
        return "open=\(open) tickers=\(tickers)\n" + lines.joined(separator: "\n")
    }
}

extension PythonServer {
    /// Asks the server (on a connection of its own, which the stats leave out) what it has seen.
    func stats() async throws -> StrawberryStats {
        let socket = try await RawGraphQLSocket.open(self)
        do {
            try await socket.initialize(token: token)
            try await socket.send(#"{"id":"stats","type":"subscribe","payload":{"query":"{ stats }"}}"#)
            while true {
                let frame = try await socket.nextFrame()
                guard frame.type == "next", frame.id == "stats" else { continue }
                struct Next: Decodable {
                    struct Payload: Decodable {
                        struct Data: Decodable { var stats: String }
                        var data: Data
                    }
                    var payload: Payload
                }
                let next = try JSONDecoder().decode(Next.self, from: Data(frame.text.utf8))
                let stats = try JSONDecoder().decode(StrawberryStats.self, from: Data(next.payload.data.stats.utf8))
                await socket.close()
                return stats
            }
        } catch {
            await socket.close()
            throw error
        }
    }

    /// Polls ``stats()`` until `condition` holds, failing with the last stats after `timeout` seconds.
    @discardableResult
    func eventually(
        _ what: String, timeout: Double = 10, _ condition: (StrawberryStats) -> Bool
    ) async throws -> StrawberryStats {
        let deadline = ContinuousClock.now + .milliseconds(Int64(TestTime.scaled(timeout) * 1000))
        var last: StrawberryStats?
        while ContinuousClock.now < deadline {
            let stats = try await stats()
            if condition(stats) { return stats }
            last = stats
            try await Task.sleep(for: .milliseconds(50))
        }
        throw StrawberryPeer.Failure(
            description: "timed out after \(timeout) s waiting for \(what); the server saw:\n\(last.map { "\($0)" } ?? "nothing")")
    }
}

// MARK: - Raw frames

/// A WebSocket speaking graphql-transport-ws by hand (through the package's own ``NIOWebSocketConnector``), for what
/// the transport never does on purpose: withholding `connection_init`, duplicate ids, malformed frames.
struct RawGraphQLSocket: Sendable {
    /// One inbound text frame with its `type` and `id` read out.
    struct Frame: Sendable {
        var text: String
        var type: String?
        var id: String?
    }

    struct UnexpectedEvent: Error, CustomStringConvertible {
        var description: String
    }

    let connection: OpenWebSocket

    static func open(_ server: PythonServer) async throws -> RawGraphQLSocket {
        let connector = NIOWebSocketConnector(closeTimeout: .seconds(2))
        let request = WebSocketRequest(url: server.url, subprotocols: ["graphql-transport-ws"])
        return RawGraphQLSocket(
            connection: try await withTestTimeout(10, "the WebSocket upgrade") { try await OpenWebSocket.open(connector, request) })
    }

    func send(_ text: String) async throws {
        try await connection.send(.text(text))
    }

    /// The next event, failing after `timeout` seconds.
    func receive(timeout: Double = scriptedWait) async throws -> WebSocketInboundEvent {
        let connection = connection
        return try await withTestTimeout(timeout, "a WebSocket event from strawberry") { await connection.receive() }
    }

    /// The next text frame; throws if the connection closes instead.
    func nextFrame(timeout: Double = scriptedWait) async throws -> Frame {
        switch try await receive(timeout: timeout) {
        case .closed(let info):
            throw UnexpectedEvent(description: "connection closed (\(info)) while a frame was expected")
        case .message(.binary):
            throw UnexpectedEvent(description: "binary frame from strawberry")
        case .message(.text(let text)):
            struct Envelope: Decodable {
                var type: String?
                var id: String?
            }
            let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(text.utf8))
            return Frame(text: text, type: envelope?.type, id: envelope?.id)
        }
    }

    /// Skips frames until the connection closes, and returns how.
    func closeInfo(timeout: Double = scriptedWait) async throws -> WebSocketCloseInfo {
        let connection = connection
        return try await withTestTimeout(timeout, "strawberry to close the connection") {
            while true {
                if case .closed(let info) = await connection.receive() { return info }
            }
        }
    }

    /// Sends `connection_init` with `token` and expects `connection_ack`.
    func initialize(token: String) async throws {
        try await send(#"{"type":"connection_init","payload":{"Authorization":"\#(token)"}}"#)
        let frame = try await nextFrame()
        guard frame.type == "connection_ack" else {
            throw UnexpectedEvent(description: "expected connection_ack, got \(frame.text)")
        }
    }

    func close() async {
        await connection.close(code: 1000, reason: "done")
    }
}
#endif
