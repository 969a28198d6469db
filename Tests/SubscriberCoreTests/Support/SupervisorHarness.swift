import Foundation
import Logging
import RealtimeTesting

@testable import SubscriberCore

/// A supervisor over the scripted server and a manual clock, running a minimal protocol (``TestLinkDriver``): the
/// client says `hello`, the server answers `ack`; `ka` frames are keep-alives; `ping` is the protocol's ping.
final class SupervisorHarness: Sendable {
    let server = ScriptedWebSocketServer()
    let clock = ManualClock()
    let states = ConnectionStateBroadcaster()
    let links: TestLinks
    let monitor: DrivenNetworkPathMonitor
    let auth = ScriptedAuthSession(.bearerToken("t"))
    let log = CapturedLog()
    /// What the supervisor records as the transport's ``RealtimeTransport/lastConnectionFailure`` and
    /// ``RealtimeTransport/connectionLostAt``.
    let outage = Locked(ConnectionOutage())
    private let requests: AsyncStream<SupervisorRequest>.Continuation
    private let recorded = Locked<[ConnectionState]>([])
    private let task: Task<Void, Never>
    private let recorder: Task<Void, Never>

    /// - Parameters:
    ///   - random: the reconnect policy's random value (0.5: half of each capped delay with full jitter).
    ///   - refusing: how many connection attempts the server refuses from the start.
    init(
        policy: ReconnectPolicy = .default, random: Double = 0.5, liveness: LivenessSettings = LivenessSettings(),
        fallback: LinkLiveness = .protocolPing, path: NetworkPath? = .satisfied(.wifi), refusing: Int = 0
    ) {
        server.refuseNextConnections(refusing)
        links = TestLinks(fallback: fallback, states: states)
        monitor = DrivenNetworkPathMonitor(path)
        let (stream, continuation) = AsyncStream<SupervisorRequest>.makeStream()
        requests = continuation
        let log = log
        let logger = Logger(label: "test.supervisor") { _ in log }
        let runner = LinkRunner(
            clock: clock, wallClock: .system, logger: logger, ackTimeout: .seconds(15), rotateAfter: nil, liveness: liveness)
        let supervisor = LinkSupervisor(
            decisions: SupervisorStateMachine(policy: policy, random: { random }), auth: auth, connector: server, runner: runner,
            states: states, logger: logger, pathMonitor: monitor, outage: outage)
        let stateStream = states.makeStream()
        let recorded = recorded
        recorder = Task { for await state in stateStream { recorded.withLock { $0.append(state) } } }
        task = Task { [links] in await supervisor.run(links, requests: stream) }
    }

    deinit {
        task.cancel()
        recorder.cancel()
    }

    /// Asks the supervisor for something, as a transport does.
    func request(_ request: SupervisorRequest) { requests.yield(request) }

    /// Every state so far.
    var recordedStates: [ConnectionState] { recorded.withLock { $0 } }

    /// Waits until `state` was reported (at any point so far).
    func waitFor(_ state: ConnectionState, timeout: Double = scriptedWait) async throws {
        try await withTestTimeout(timeout, "state \(state)") { [recorded] in
            while !recorded.withLock({ $0.contains(state) }) { try await TestTime.pollPause() }
        }
    }

    /// Takes the next connection and acknowledges it.
    func accept() async throws -> ScriptedConnection {
        let connection = try await server.nextConnection()
        let hello = try await connection.nextSentText()
        guard hello == "hello" else { throw TestTimeoutError(what: "hello as the first frame (got \(hello))") }
        connection.emit("ack")
        return connection
    }

    /// Stops the supervisor and waits for it to end.
    func stop() async {
        task.cancel()
        await task.value
    }
}

/// The transport side of the supervisor in tests: records link ends, wants a connection while `wanted`, reports
/// `connected` when a link opens (as the transports do).
final class TestLinks: SupervisedTransport {
    let fallback: LinkLiveness
    let states: ConnectionStateBroadcaster
    private let state = Locked<(wanted: Bool, ended: [LinkReport], stopped: DisconnectReason?)>((true, [], nil))

    init(fallback: LinkLiveness, states: ConnectionStateBroadcaster) {
        self.fallback = fallback
        self.states = states
    }

    /// Whether a connection is wanted.
    var wanted: Bool {
        get { state.withLock { $0.wanted } }
        set { state.withLock { $0.wanted = newValue } }
    }

    /// The reports of every link that ended, in order.
    var ended: [LinkReport] { state.withLock { $0.ended } }

    /// Why the supervisor stopped, if it did.
    var stopped: DisconnectReason? { state.withLock { $0.stopped } }

    var wantsConnection: Bool { wanted }

    func makeLink(id: Int, credentials: AuthCredentials, role: LinkRole) -> (WebSocketRequest, any LinkDriver) {
        (WebSocketRequest(url: URL(string: "ws://127.0.0.1:9/test")!), TestLinkDriver(fallback: fallback, states: states))
    }

    func linkEnded(id: Int, role: LinkRole, report: LinkReport) -> LinkLoss {
        state.withLock { $0.ended.append(report) }
        switch report.end {
        case .requested, .rotated: return .lost(.requested)
        case .authRejected(let detail), .openFailed(let detail, authRejected: true): return .lost(.authRejected(detail))
        default: return .lost(.retryable)
        }
    }

    func stop(_ reason: DisconnectReason, error: RealtimeError) { state.withLock { $0.stopped = reason } }
}

/// The minimal protocol of ``SupervisorHarness``.
struct TestLinkDriver: LinkDriver {
    let fallback: LinkLiveness
    let states: ConnectionStateBroadcaster

    func handshakeMessages() -> [WebSocketMessage] { [.text("hello")] }

    func handleHandshakeFrame(_ message: WebSocketMessage) -> LinkHandshakeStep {
        switch message {
        case .text("ack"): .acknowledged(fallback)
        case .text("refused"): .fail(.authRejected("refused"), closeCode: 4403, reason: "refused")
        default: .pending
        }
    }

    func linkOpened(_ control: LinkControl) { states.update(.connected) }

    func handleFrame(_ message: WebSocketMessage, into batch: DeliveryBatch) -> LinkFrameStep {
        switch message {
        case .text("ka"): .keepAlive
        case .text("ping"): .reply(.text("pong"))
        default: .handled
        }
    }

    func pendingMessages() -> [WebSocketMessage] { [] }

    func pingMessage() -> WebSocketMessage? { .text("ping") }

    func timerFired(_ token: Int) {}

    func rotationDue() {}
}
