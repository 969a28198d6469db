import Foundation
import Logging

/// The connect / run / back off loop both transports share: the I/O shell of ``SupervisorStateMachine``, which makes
/// every decision (when to connect, back off, wait for the network, probe, rotate or stop). One structured scope: every
/// link (and a rotation's successor) runs as a child task of it, so cancelling the supervisor ends every link. Before
/// every attempt it asks ``AuthSession/isSignedIn()`` and fetches credentials anew (forced after an auth rejection).
package struct LinkSupervisor<C: Clock>: Sendable where C.Duration == Duration {
    /// The decisions, before the first input (a prototype: each run starts from a copy).
    package let decisions: SupervisorStateMachine
    package let auth: any AuthSession
    package let connector: any WebSocketConnector
    package let runner: LinkRunner<C>
    package let states: ConnectionStateBroadcaster
    package let logger: Logger
    /// The device's network path; `nil`: assume it is always usable.
    package let pathMonitor: (any NetworkPathMonitor)?
    /// Why the latest connection was lost or could not be made since one was last acknowledged: what
    /// ``RealtimeTransport/lastConnectionFailure`` reports while the transport is not connected.
    package let lastFailure: Locked<String?>
    /// When the latest acknowledged connection was lost (its last frame received): what
    /// ``RealtimeTransport/connectionLostAt`` reports while the transport is not connected.
    package let lostAt: Locked<Date?>

    /// Creates a supervisor; `random` (values in `0..<1`) is the policy's jitter, injectable for deterministic tests.
    package init(
        policy: ReconnectPolicy, auth: any AuthSession, connector: any WebSocketConnector, runner: LinkRunner<C>,
        states: ConnectionStateBroadcaster, logger: Logger, pathMonitor: (any NetworkPathMonitor)? = nil,
        lastFailure: Locked<String?> = Locked(nil), lostAt: Locked<Date?> = Locked(nil),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.decisions = SupervisorStateMachine(policy: policy, random: random)
        self.auth = auth
        self.connector = connector
        self.runner = runner
        self.states = states
        self.logger = logger
        self.pathMonitor = pathMonitor
        self.lastFailure = lastFailure
        self.lostAt = lostAt
    }

    /// What reaches the shell: each is handed to the state machine, in the order it arrived.
    private enum Input: Sendable {
        case request(SupervisorRequest)
        case requestsEnded
        case path(NetworkPath)
        case link(id: Int, role: LinkRole, report: LinkReport, lasted: Duration = .zero)
        case noCredentials(RealtimeError)
        case backoffElapsed(Int)
    }

    /// Runs until the transport stops, its request stream ends, or the task is cancelled (every link then closes). The
    /// group's children (request and path listeners, links, the backoff sleep) post into one inbox this loop reads.
    package func run(_ transport: any SupervisedTransport, requests: AsyncStream<SupervisorRequest>) async {
        let (inbox, post) = AsyncStream<Input>.makeStream()
        let registry = LinkRegistry()
        let credentials = ConnectCredentials(auth)
        var machine = decisions
        var backoff: (id: Int, cancel: OneShotSignal<Void>)?
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await request in requests { post.yield(.request(request)) }
                post.yield(.requestsEnded)
            }
            if let pathMonitor {
                group.addTask {
                    for await path in pathMonitor.paths() { post.yield(.path(path)) }  // ended: the last path stands
                }
            }
            /// Performs `actions`; `false` once the supervisor ends.
            func perform(_ actions: [SupervisorStateMachine.Action]) -> Bool {
                for action in actions {
                    switch action {
                    case .report(let state): states.update(state)
                    case .startLink(let id, let role, let forceRefresh):
                        group.addTask {
                            post.yield(await link(id: id, role: role, forceRefresh: forceRefresh, credentials, transport, registry))
                        }
                    case .startBackoff(let id, let delay, let attempt):
                        logger.info("reconnecting", metadata: ["attempt": "\(attempt)", "delay": "\(delay)"])
                        let (cancel, clock) = (OneShotSignal<Void>(), runner.clock)
                        let deadline = clock.now.advanced(by: delay)
                        backoff = (id, cancel)
                        group.addTask {
                            _ = await race(clock: clock, deadline: deadline, signal: cancel)
                            post.yield(.backoffElapsed(id))
                        }
                    case .cancelBackoff(let id): if backoff?.id == id { backoff?.cancel.fire() }
                    case .probeOpenLinks(let why):
                        let probed = registry.probeAll(timeout: runner.liveness.probeTimeout)
                        if probed > 0 { logger.info("probing the open links", metadata: ["why": "\(why.rawValue)", "links": "\(probed)"]) }
                    case .pathChanged(let old, let new): logger.info("network path changed", metadata: ["from": "\(old)", "to": "\(new)"])
                    case .waitForNetwork(let again): logger.info("no network: the \(again ? "reconnect" : "connection") waits for it")
                    case .skipWait(let why): logger.info("reconnecting now, skipping the wait", metadata: ["why": "\(why.rawValue)"])
                    case .stop(let reason, let error):
                        transport.stop(reason, error: error)
                        return false
                    case .finish: return false
                    }
                }
                return true
            }

            var inputs = inbox.makeAsyncIterator()
            var running = perform(machine.start(wantsConnection: transport.wantsConnection))
            while running, let input = await inputs.next() {
                let wants = transport.wantsConnection
                switch input {
                case .request(.demandChanged): running = perform(machine.demandChanged(wantsConnection: wants))
                case .request(.rotate): running = perform(machine.rotationDue())
                case .request(.verifyConnection): running = perform(machine.verifyConnection(wantsConnection: wants))
                case .requestsEnded: running = perform(machine.requestsEnded())
                case .path(let path): running = perform(machine.pathChanged(to: path, wantsConnection: wants))
                case .backoffElapsed(let id): running = perform(machine.backoffElapsed(id: id, wantsConnection: wants))
                case .noCredentials(let error): running = perform(machine.noCredentials(error, wantsConnection: wants))
                case .link(let id, let role, let report, let lasted):
                    let loss = transport.linkEnded(id: id, role: role, report: report)
                    if case .lost = loss {
                        let close = report.close.map { "\($0)" } ?? "-"
                        logger.info("connection ended", metadata: ["link": "\(id)", "reason": "\(report.end)", "close": "\(close)"])
                    }
                    // Recorded before the state that reports the loss, so whoever reads the state can read why; an
                    // acknowledged link makes any failure before it history.
                    if case .lost(let ending) = loss, ending != .requested {
                        lastFailure.withLock { $0 = report.close.map { "\(report.end), close \($0)" } ?? "\(report.end)" }
                    } else if report.acknowledged {
                        lastFailure.withLock { $0 = nil }
                    }
                    // An outage starts where an acknowledged link fell silent; failed attempts after it do not move it.
                    if case .lost(let ending) = loss, report.acknowledged || ending == .requested {
                        lostAt.withLock { $0 = ending == .requested ? nil : report.lastReceived ?? runner.wallClock.now() }
                    }
                    running = perform(
                        machine.linkEnded(
                            loss: loss, acknowledged: report.acknowledged, lasted: lasted, wantsConnection: transport.wantsConnection))
                }
            }
            // Stopped, or cancelled (disconnect): every link closes; the transport ends its streams itself.
            group.cancelAll()
            credentials.cancel()
        }
        post.finish()
    }

    /// One link's life: sign-in and credentials first, then the link. Without them a primary leaves it to the state
    /// machine (signed out: stop; the session threw: retry a few times); a successor just fails. A session that does
    /// not answer within the ack timeout fails the attempt, which is retried after the backoff like any other (see
    /// ``ConnectCredentials``).
    private func link(
        id: Int, role: LinkRole, forceRefresh: Bool, _ credentials: ConnectCredentials, _ transport: any SupervisedTransport,
        _ registry: LinkRegistry
    ) async -> Input {
        let timeout = runner.ackTimeout
        guard let answer = await credentials.ask(forceRefresh: forceRefresh, timeout: timeout, clock: runner.clock) else {
            return .link(id: id, role: role, report: LinkReport(end: .credentialsTimeout(timeout)))
        }
        let failure: RealtimeError
        switch answer {
        case .credentials(let credentials):
            let (request, driver) = transport.makeLink(id: id, credentials: credentials, role: role)
            let started = runner.clock.now
            let report = await runner.run(id: id, connector: connector, request: request, driver: driver, registry: registry)
            return .link(id: id, role: role, report: report, lasted: started.duration(to: runner.clock.now))
        case .signedOut: failure = .signedOut
        case .unavailable(let error): failure = .sessionExpired("credentials unavailable: \(error)")
        case .cancelled: return .link(id: id, role: role, report: LinkReport(end: .requested))
        }
        guard role == .primary else {
            return .link(id: id, role: role, report: LinkReport(end: .openFailed("\(failure)", authRejected: false)))
        }
        return .noCredentials(failure)
    }
}
