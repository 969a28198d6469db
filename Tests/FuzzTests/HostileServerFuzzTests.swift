import AppSyncEventsTransport
import Foundation
import GraphQLTransport
import Logging
import NIOCore
import RealtimeTesting
import SubscriberCore
import Testing
import WebSocketNIO

/// Issue 9, item 4: no server input can stop healing or crash the process.
///
/// A seeded hostile server (``HostileWebSocketServer``) streams valid seq-numbered events mixed with hostile frames to
/// a real transport over a real socket (the default `NIOWebSocketConnector`). Asserted: the consumer's stream never
/// ends (nor with an error); delivered seq numbers are never duplicated or reordered; after every link end the client
/// opens a new connection within the reconnect delay + 2 s (the server's own timestamps); and valid events still
/// arrive at the end (the final burst).
///
/// Environment: `VORTEX_FUZZ_SEED` (decimal or 0x-hex) replays a run; `VORTEX_FUZZ_LONG=1` sends 1M frames per
/// transport instead of 100k; `VORTEX_FUZZ_FRAMES`, `VORTEX_FUZZ_BATCH`, `VORTEX_FUZZ_INTERVAL_US` tune a run;
/// `VORTEX_FUZZ_LOG=debug` shows the client's logs; `VORTEX_FUZZ_ZOMBIE=0` stops a connection that ignores the
/// client's close from answering pings afterwards (see `HostileWebSocketServer.Options.answersAfterIgnoringClose`).
@Suite("Hostile-server fuzz", .serialized)
struct HostileServerFuzzTests {
    @Test("AppSync Events heals under a hostile server")
    func appSync() async throws {
        try await FuzzRun(dialect: .appSync).run()
    }

    @Test("graphql-transport-ws heals under a hostile server")
    func graphQL() async throws {
        try await FuzzRun(dialect: .graphQL).run()
    }

    @Test("the same seed generates the same frames")
    func generatorIsDeterministic() {
        for dialect in [FuzzDialect.appSync, .graphQL] {
            func frames(_ seed: UInt64) -> [[UInt8]] {
                var generator = HostileFrameGenerator(
                    dialect: dialect, mix: FrameMix(benign: 0.3, ending: 0.05, slow: 0.01), keepAliveMilliseconds: 1500,
                    clientMaxSize: 4096, rng: SplitMix64.derived(seed: seed, index: 3))
                let scenario = generator.scenario()
                var seq = 0
                return (0..<2000).map { _ in
                    generator.next(id: "s", scenario: scenario) {
                        defer { seq += 1 }
                        return seq
                    }.bytes
                }
            }
            #expect(frames(42) == frames(42))
            #expect(frames(42) != frames(43))
        }
    }
}

/// The environment's settings for a run.
enum FuzzSettings {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    static let seed: UInt64 = {
        if let text = environment["VORTEX_FUZZ_SEED"]?.trimmingCharacters(in: .whitespaces) {
            if text.lowercased().hasPrefix("0x"), let value = UInt64(text.dropFirst(2), radix: 16) { return value }
            if let value = UInt64(text) { return value }
        }
        return UInt64.random(in: 1...UInt64.max)
    }()

    static var long: Bool { environment["VORTEX_FUZZ_LONG"] == "1" }
    static var frames: Int { environment["VORTEX_FUZZ_FRAMES"].flatMap { Int($0) } ?? (long ? 1_000_000 : 100_000) }
    static var logLevel: Logger.Level? { environment["VORTEX_FUZZ_LOG"].flatMap { Logger.Level(rawValue: $0) } }
    static var batchSize: Int? { environment["VORTEX_FUZZ_BATCH"].flatMap { Int($0) } }
    static var batchIntervalMicroseconds: Int64? { environment["VORTEX_FUZZ_INTERVAL_US"].flatMap { Int64($0) } }
}

/// What the consumer of the subscription stream saw.
struct ConsumerLog: Sendable {
    var live = 0
    var resumed = 0
    var lostReports = 0
    var lostCount = 0
    var delivered = 0
    var foreign = 0
    var lastSeq = -1
    var violations: [String] = []
    var seqs: [Int] = []
    /// Set when the stream ends: `nil` error for a normal end.
    var ended: (error: String?, at: ContinuousClock.Instant)?
}

struct FuzzRun {
    let dialect: FuzzDialect
    let seed = FuzzSettings.seed
    let reconnectDelay = Duration.milliseconds(50)
    /// Valid events the client must see after the generated frames.
    let finalBurst = 300

    func run() async throws {
        let frames = FuzzSettings.frames
        print(
            "[fuzz] \(dialect.rawValue): seed \(seed) (\(String(seed, radix: 16))), \(frames) frames; rerun with VORTEX_FUZZ_SEED=\(seed)")
        var options = HostileWebSocketServer.Options(dialect: dialect, seed: seed, frameBudget: frames)
        if let batch = FuzzSettings.batchSize { options.batchSize = batch }
        if let interval = FuzzSettings.batchIntervalMicroseconds { options.batchInterval = .microseconds(interval) }
        options.answersAfterIgnoringClose = FuzzSettings.environment["VORTEX_FUZZ_ZOMBIE"] != "0"
        // graphql-transport-ws ends the link on more of the "benign" frames (a lone surrogate in an id, an empty
        // `next` payload): fewer of them keep reconnects (and the run time) in bounds.
        if dialect == .graphQL { options.mix.benign = 0.03 }
        let server = try await HostileWebSocketServer.start(options)
        let started = ContinuousClock.now

        // VORTEX_FUZZ_LOG=debug (or trace) shows what the client did; quiet by default (thousands of ignored frames).
        var logger = Logger(label: "vortex.fuzz.\(dialect.rawValue)")
        logger.logLevel = FuzzSettings.logLevel ?? .critical
        let transport = try makeTransport(server, logger: logger)
        let stream = await transport.subscribe(
            dialect == .appSync ? .channel("fuzz/events") : .graphQL(GraphQLOperation(query: "subscription { f { seq } }")))
        let log = Locked(ConsumerLog())
        let consumer = Task {
            do {
                for try await event in stream { log.withLock { record(event, in: &$0) } }
                log.withLock { $0.ended = (nil, .now) }
            } catch {
                log.withLock { $0.ended = ("\(error)", .now) }
            }
        }

        // Wait for the final burst, failing on a stream end, a stall or the overall deadline.
        let overall: Duration = FuzzSettings.long ? .seconds(3600) : .seconds(300)
        let stallLimit: Duration = .seconds(30)
        var lastProgress = (-1, -1, -1)
        var lastProgressAt = ContinuousClock.now
        var failure: String?
        while true {
            try await Task.sleep(for: .milliseconds(100))
            let snapshot = server.snapshot
            let seen = log.withLock { $0 }
            if let ended = seen.ended {
                failure = "the subscription stream ended before disconnect (error: \(ended.error ?? "none, a normal end"))"
                break
            }
            if let from = snapshot.finalFromSeq, seen.lastSeq >= from + finalBurst { break }
            let progress = (snapshot.framesSent, snapshot.connections.count, seen.delivered)
            if progress != lastProgress {
                lastProgress = progress
                lastProgressAt = .now
            } else if lastProgressAt.duration(to: .now) > stallLimit {
                failure = "no progress for \(stallLimit): no frame sent, no connection opened, no event delivered"
                break
            }
            if started.duration(to: .now) > overall {
                failure = "the run did not finish within \(overall)"
                break
            }
        }
        let elapsed = started.duration(to: .now)
        let before = server.snapshot

        await transport.disconnect()
        let endedNormally = await waitUntil(.seconds(10)) { log.withLock { $0.ended != nil } }
        consumer.cancel()
        let allClosed = await waitUntil(.seconds(10)) { server.snapshot.connections.allSatisfy { $0.closedAt != nil } }
        let seen = log.withLock { $0 }
        let after = server.snapshot
        await server.shutdown()

        let reconnects = reconnectGaps(before)
        report(before, seen, elapsed: elapsed, reconnects: reconnects)

        let context = "[\(dialect.rawValue) seed \(seed): rerun with VORTEX_FUZZ_SEED=\(seed)]"
        if let failure {
            Issue.record("\(failure) \(context)\n\(diagnostics(before, seen))")
        }
        #expect(seen.violations.isEmpty, "duplicated or reordered seq numbers: \(seen.violations.prefix(10)) \(context)")
        #expect(
            endedNormally && seen.ended?.error == nil,
            "after disconnect the stream must end normally: \(String(describing: seen.ended?.error)) \(context)")
        let bound = reconnectDelay + .seconds(2)
        for gap in reconnects where gap.gap > bound {
            Issue.record(
                "connection \(gap.index + 1) opened \(gap.gap) after connection \(gap.index) ended (bound \(bound)); the lost link: \(describe(before.connections[gap.index])) \(context)"
            )
        }
        if let last = before.connections.last, let closedAt = last.closedAt, closedAt.duration(to: .now) > bound + .seconds(1),
            after.connections.count == before.connections.count
        {
            Issue.record("no new connection after connection \(last.index) ended: \(describe(last)) \(context)")
        }
        #expect(
            allClosed, "connections left open after disconnect: \(after.connections.filter { $0.closedAt == nil }.map(\.index)) \(context)")
        #expect(before.framesSent >= min(frames, options.frameBudget) || failure != nil)
    }

    private func makeTransport(_ server: HostileWebSocketServer, logger: Logger) throws -> any RealtimeTransport {
        let auth = StaticAuthSession(.apiKey("da2-fuzz"))
        var socketLogger = logger
        socketLogger.logLevel = FuzzSettings.logLevel ?? .critical
        let connector = NIOWebSocketConnector(logger: socketLogger)
        switch dialect {
        case .appSync:
            var configuration = AppSyncEventsConfiguration(endpoint: try AppSyncEndpoint(realtimeURL: server.url))
            configuration.link.reconnectPolicy = .fixed(reconnectDelay)
            configuration.link.ackTimeout = .seconds(1)
            configuration.defaultKeepAliveTimeout = .milliseconds(server.options.keepAliveMilliseconds)
            configuration.maxConnectionDuration = nil
            return AppSyncEventsTransport(configuration: configuration, auth: auth, connector: connector, logger: logger)
        case .graphQL:
            var configuration = try GraphQLTransportConfiguration(url: URL(string: "ws://127.0.0.1:\(server.port)/graphql")!)
            configuration.link.reconnectPolicy = .fixed(reconnectDelay)
            configuration.link.ackTimeout = .seconds(1)
            configuration.link.liveness = LivenessSettings(quietPeriod: .milliseconds(500), pongTimeout: .milliseconds(500))
            return GraphQLTransport(configuration: configuration, auth: auth, connector: connector, logger: logger)
        }
    }

    private func record(_ event: SubscriptionEvent, in log: inout ConsumerLog) {
        switch event {
        case .live: log.live += 1
        case .resumed: log.resumed += 1
        case .lost(let report):
            log.lostReports += 1
            log.lostCount += report.count
        case .payload(let payload):
            guard let seq = Self.seq(of: payload.json) else {
                log.foreign += 1
                return
            }
            log.delivered += 1
            if seq <= log.lastSeq, log.violations.count < 50 {
                log.violations.append(seq == log.lastSeq ? "duplicate \(seq)" : "\(seq) after \(log.lastSeq)")
            }
            log.lastSeq = max(log.lastSeq, seq)
            log.seqs.append(seq)
        }
    }

    /// The seq number of a valid event's payload, exactly `{"seq":N}`; `nil` for anything else.
    static func seq(of json: Data) -> Int? {
        let prefix = Array(#"{"seq":"#.utf8)
        guard json.count > prefix.count + 1, json.count <= prefix.count + 19, json.starts(with: prefix), json.last == UInt8(ascii: "}")
        else {
            return nil
        }
        let digits = json.dropFirst(prefix.count).dropLast()
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    struct ReconnectGap {
        var index: Int
        var gap: Duration
    }

    /// For every connection that ended with a successor: how long after its end the next one opened.
    private func reconnectGaps(_ snapshot: HostileWebSocketServer.Snapshot) -> [ReconnectGap] {
        let connections = snapshot.connections
        guard connections.count > 1 else { return [] }
        return (0..<(connections.count - 1)).compactMap { index in
            guard let closed = connections[index].closedAt else { return nil }
            let gap = closed.duration(to: connections[index + 1].openedAt)
            return ReconnectGap(index: index, gap: max(gap, .zero))
        }
    }

    private func waitUntil(_ limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    private func describe(_ connection: HostileWebSocketServer.ConnectionRecord) -> String {
        let ending =
            connection.ending.map { "\($0.kind) written \(ms($0.at.duration(to: connection.closedAt ?? .now))) before the close" } ?? "none"
        return "#\(connection.index) scenario=\(connection.scenario) upgraded=\(connection.upgraded) subscribed=\(connection.subscribed) "
            + "frames=\(connection.framesWritten) ending=\(ending) closed=\(connection.closedAt != nil) last=\(connection.recentKinds.suffix(12))"
    }

    private func diagnostics(_ snapshot: HostileWebSocketServer.Snapshot, _ log: ConsumerLog) -> String {
        let lines = snapshot.connections.suffix(5).map { "  " + describe($0) }
        return
            "server: \(snapshot.framesSent) frames, \(snapshot.connections.count) connections; client: \(log.delivered) delivered, last seq \(log.lastSeq)\n"
            + lines.joined(separator: "\n")
    }

    private func ms(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.0f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }

    private func report(_ snapshot: HostileWebSocketServer.Snapshot, _ log: ConsumerLog, elapsed: Duration, reconnects: [ReconnectGap]) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let maxGap = reconnects.map(\.gap).max() ?? .zero
        let endings = snapshot.connections.compactMap { connection -> Duration? in
            guard let ending = connection.ending, let closed = connection.closedAt else { return nil }
            return ending.at.duration(to: closed)
        }
        let hostile = snapshot.kindCounts.filter { !$0.key.hasPrefix("valid") }.values.reduce(0, +)
        print(
            """
            [fuzz] \(dialect.rawValue) seed \(seed): \(snapshot.framesSent) generated frames (\(hostile) hostile, \(snapshot.validSent) valid \
            events incl. the final burst) in \(String(format: "%.1f", seconds)) s = \(Int(Double(snapshot.framesSent) / max(seconds, 0.001))) frames/s; \
            \(snapshot.connections.count) connections; client: \(log.delivered) events delivered (\(snapshot.validSent - log.delivered) never read: in flight when a link ended, or lost), \(log.foreign) other payloads, \
            \(log.lostReports) loss reports (\(log.lostCount) events), \(log.resumed) resumed; max reconnect gap \(ms(maxGap)); \
            max ending-frame-to-close \(ms(endings.max() ?? .zero))
            """)
        let top = snapshot.kindCounts.sorted { $0.value > $1.value }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("[fuzz] \(dialect.rawValue) frame kinds: \(top)")
    }
}
