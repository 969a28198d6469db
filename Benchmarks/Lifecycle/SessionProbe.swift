import BackendNotifier
import Composition
import Foundation
import LocalBackend
import Logging
import SubscriberCore
import WebSocketNIO

#if canImport(CHeapInUse)
import CHeapInUse
#endif

/// Issue 29's memory figure: what sessions that ended keep. Each session is a `RealtimeStack` made, observed (its role
/// stream, until the subscription is live) and shut down, or dropped; the heap in use (glibc's `mallinfo2`, which
/// counts what is allocated and not freed, unlike RSS) is read after every `every` sessions, once the process has
/// settled. The local backend runs in a child process, so its own memory does not count.
struct SessionProbe {
    let kind: RealtimeConfiguration.TransportKind
    let sessions: Int
    let every: Int
    let drop: Bool
    /// Seconds to wait before each reading: timers of ended sessions (the handshake's, the network-error limit's) hold
    /// their allocation until their deadline even when cancelled, so a reading this long after the sessions shows only
    /// what they keep for good.
    let settle: Int

    /// One reading: sessions ended so far, and the heap in use then.
    struct Reading {
        let sessions: Int
        let heapBytes: Int
    }

    func run() async throws -> [Reading] {
        let backend = try BackendProcess.start()
        defer { backend.stop() }
        var configuration = RealtimeConfiguration()
        configuration.transport = kind
        configuration.appSyncEndpoint = backend.endpoints.http
        configuration.graphQLEndpoint = backend.endpoints.graphql
        var logger = Logger(label: "sessions")
        logger.logLevel = .critical
        let auth = StaticAuthSession(.bearerToken(backend.token))
        var readings: [Reading] = [Reading(sessions: 0, heapBytes: try await settledHeap())]
        for index in 1...sessions {
            try await session(configuration, auth: auth, logger: logger)
            if index % every == 0 {
                readings.append(Reading(sessions: index, heapBytes: try await settledHeap()))
                FileHandle.standardError.write(Data("\(index) sessions: \(readings.last!.heapBytes) bytes in use\n".utf8))
            }
        }
        return readings
    }

    private func session(_ configuration: RealtimeConfiguration, auth: StaticAuthSession, logger: Logger) async throws {
        let stack = try RealtimeStack(
            configuration: configuration, auth: auth, userId: BackendProcess.user, organizationId: BackendProcess.organization,
            connector: NIOWebSocketConnector(), logger: logger, networkPathMonitor: nil)
        let events = await stack.notifier.connectionEvents()
        let roles = await stack.notifier.roleValues()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    if case .live = event { return }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                throw BenchFailure("a session was not live within 10 s")
            }
            try await group.next()
            group.cancelAll()
        }
        if !drop { await stack.shutdown() }
        withExtendedLifetime(roles) {}
    }

    /// The heap in use once background work has wound down (a dropped stack's tasks end shortly after) and, with
    /// ``settle``, the ended sessions' timers have run out.
    func settledHeap() async throws -> Int {
        try await Task.sleep(for: settle > 0 ? .seconds(settle) : .milliseconds(500))
        #if canImport(CHeapInUse)
        return Int(vortex_heap_in_use())
        #else
        return 0
        #endif
    }

    /// Bytes per session between two readings.
    static func perSession(_ from: Reading, _ to: Reading) -> Double {
        Double(to.heapBytes - from.heapBytes) / Double(max(1, to.sessions - from.sessions))
    }
}

/// The local backend in a child process (`LifecycleBench backend`), so the probe's heap is the client's alone.
struct BackendProcess {
    static let secret = "session-probe-jwt-secret-of-32-bytes-or-more"
    static let user = "u-1"
    static let organization = "o-1"

    let process: Process
    /// The child's standard input: it exits when this closes, so it never outlives the probe.
    let lifeline: Pipe
    let endpoints: LocalBackendEndpoints
    let token: String

    static func start() throws -> BackendProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["backend"]
        let output = Pipe()
        let lifeline = Pipe()
        process.standardOutput = output
        process.standardInput = lifeline
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let urls = try? JSONDecoder().decode([String: String].self, from: line), let http = urls["http"],
            let graphql = urls["graphql"], let realtime = urls["realtime"]
        else {
            process.terminate()
            throw BenchFailure("the backend process printed no endpoints")
        }
        let token = try DevelopmentToken.make(secret: secret, user: user, ttl: .seconds(24 * 3600))
        return BackendProcess(
            process: process, lifeline: lifeline,
            endpoints: LocalBackendEndpoints(http: http, realtime: realtime, graphql: graphql, admin: nil), token: token)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// The child's side: serves until killed, after printing its endpoints as one JSON line.
    static func serve() async throws -> Never {
        var configuration = LocalBackendConfiguration()
        configuration.jwtSecret = secret
        var logger = Logger(label: "sessions.backend")
        logger.logLevel = .critical
        let server = LocalBackendServer(configuration: configuration, logger: logger)
        let endpoints = try await server.start()
        let line = try JSONEncoder().encode(["http": endpoints.http, "graphql": endpoints.graphql, "realtime": endpoints.realtime])
        FileHandle.standardOutput.write(line + Data("\n".utf8))
        // The probe holds our standard input open: end of file means it has gone.
        _ = FileHandle.standardInput.readDataToEndOfFile()
        exit(0)
    }
}
