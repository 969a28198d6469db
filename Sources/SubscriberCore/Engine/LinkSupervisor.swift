import Foundation
import Logging

/// The connect / run / back off loop both transports share: the I/O shell of ``SupervisorStateMachine``, which makes
/// every decision (when to connect, back off, wait for the network, probe, rotate or stop). One structured scope: every
/// link (and a rotation's successor) runs as a child task of it, so cancelling the supervisor ends every link. Before
/// every attempt it asks ``AuthSession/isSignedIn()`` and fetches credentials anew (forced after an auth rejection).
/// Made with its memberwise initializer: `decisions` carries the reconnect policy and its jitter.
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
    /// What the transport reports while it is not connected, recorded from each link's end.
    package let outage: Locked<ConnectionOutage>

    /// What reaches the shell: each is handed to the state machine, in the order it arrived.
    private enum Input: Sendable {
        case request(SupervisorRequest)
        case requestsEnded
        case path(NetworkPath)
        case link(id: Int, role: LinkRole, LinkAttempt)
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
                            let attempt = await runner.attempt(
                                id: id, role: role, forceRefresh: forceRefresh, credentials: credentials, connector: connector,
                                transport: transport, registry: registry)
                            post.yield(.link(id: id, role: role, attempt))
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
                case .link(_, _, .noCredentials(let error)): running = perform(machine.noCredentials(error, wantsConnection: wants))
                case .link(let id, let role, .ran(let report, let lasted)):
                    let loss = transport.linkEnded(id: id, role: role, report: report)
                    if case .lost = loss {
                        let close = report.close.map { "\($0)" } ?? "-"
                        logger.info("connection ended", metadata: ["link": "\(id)", "reason": "\(report.end)", "close": "\(close)"])
                    }
                    // Recorded before the state that reports the loss, so whoever reads the state can read why.
                    outage.withLock { $0.record(report, loss: loss, now: runner.wallClock.now()) }
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
}
