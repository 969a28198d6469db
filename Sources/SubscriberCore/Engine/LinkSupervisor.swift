import Logging

/// The role of a link in its transport.
package enum LinkRole: Sendable, Equatable {
    /// The link that carries the subscriptions.
    case primary
    /// A replacement opened before the primary reaches its maximum duration (AppSync rotation).
    case successor
}

/// What a link's end means to its transport.
package enum LinkLoss: Sendable, Equatable {
    /// Nothing is lost: another link carries on (a rotated or failed successor link, or a cut-over).
    case replaced
    /// The transport lost its connection; reconnect as the ending says.
    case lost(ReconnectBookkeeping.Ending)
}

/// What a transport asks of its supervisor from any task.
package enum SupervisorRequest: Sendable, Equatable {
    /// Something started or stopped needing a connection.
    case demandChanged
    /// The primary link reached its rotation lead: open a successor.
    case rotate
    /// Check at once that the connection works (the app returned to the foreground): every open link is probed with
    /// the short probe timeout, and a transport waiting to reconnect reconnects now.
    case verifyConnection
}

/// The transport side of the supervisor: everything protocol-specific it needs. Synchronous, lock-protected.
package protocol SupervisedTransport: Sendable {
    /// Whether anything (a subscription, a publish) needs a connection now.
    var wantsConnection: Bool { get }
    /// The request and the driver for a new link.
    func makeLink(id: Int, credentials: AuthCredentials, role: LinkRole) -> (WebSocketRequest, any LinkDriver)
    /// A link ended: the transport updates its subscriptions (gaps start at the report's last frame) and says
    /// whether the connection is lost.
    func linkEnded(id: Int, role: LinkRole, report: LinkReport) -> LinkLoss
    /// The transport stops for good: end every stream with `error`.
    func stop(_ reason: DisconnectReason, error: RealtimeError)
}

/// The connect / run / back off loop both transports share, as one structured scope: every link (and a rotation's
/// successor) runs as a child task of it, so cancelling the supervisor ends every link of the transport.
///
/// Before every attempt it asks ``AuthSession/isSignedIn()`` and fetches credentials anew (forcing a refresh after an
/// auth rejection); ``ReconnectBookkeeping`` decides what follows a lost connection.
///
/// With a ``NetworkPathMonitor`` it follows the device's network path: while the path is unsatisfied no attempt is
/// made and no backoff timer runs; when it is satisfied again the transport reconnects at once, skipping the backoff;
/// when the interface changes (Wi-Fi ↔ cellular) every open link is probed at once (``LivenessSettings/probeTimeout``)
/// and replaced if it does not answer. ``SupervisorRequest/verifyConnection`` does the same probe on demand.
package struct LinkSupervisor<C: Clock>: Sendable where C.Duration == Duration {
    package let policy: ReconnectPolicy
    package let auth: any AuthSession
    package let connector: any WebSocketConnector
    package let runner: LinkRunner<C>
    package let states: ConnectionStateBroadcaster
    package let logger: Logger
    /// The device's network path; `nil`: assume it is always usable.
    package let pathMonitor: (any NetworkPathMonitor)?
    /// The reconnect policy's source of randomness (values in `0..<1`), injectable so tests are deterministic.
    package let random: @Sendable () -> Double

    package init(
        policy: ReconnectPolicy, auth: any AuthSession, connector: any WebSocketConnector, runner: LinkRunner<C>,
        states: ConnectionStateBroadcaster, logger: Logger, pathMonitor: (any NetworkPathMonitor)? = nil,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.policy = policy
        self.auth = auth
        self.connector = connector
        self.runner = runner
        self.states = states
        self.logger = logger
        self.pathMonitor = pathMonitor
        self.random = random
    }

    private enum Step: Sendable {
        case request(SupervisorRequest?)
        case path(NetworkPath?)
        case link(id: Int, role: LinkRole, report: LinkReport)
        case stopped(DisconnectReason, RealtimeError)
        case backoffElapsed(Int)
    }

    /// Runs until the transport stops (signed out, session expired, the policy gave up) or the task is cancelled.
    package func run(_ transport: any SupervisedTransport, requests: AsyncStream<SupervisorRequest>) async {
        let inbox = SupervisorInbox(requests)
        let pathInbox = pathMonitor.map { PathInbox($0.paths()) }
        let registry = LinkRegistry()
        await withTaskGroup(of: Step.self) { group in
            var bookkeeping = ReconnectBookkeeping(policy: policy, random: random)
            var nextID = 0
            var primaryUnderWay = false
            // The backoff sleep under way, if any; firing `cancel` ends it early.
            var backoff: (id: Int, cancel: OneShotSignal<Void>)?
            var nextBackoffID = 0
            // A connection is wanted, but the path is unsatisfied: connect as soon as it is satisfied.
            var waitingForPath = false
            var path: NetworkPath?

            func pathSatisfied() -> Bool { path?.isSatisfied ?? true }
            func listen() { group.addTask { .request(await inbox.next()) } }
            func watchPath() {
                guard let pathInbox else { return }
                group.addTask { .path(await pathInbox.next()) }
            }
            func start(_ role: LinkRole) {
                let id = nextID
                nextID += 1
                let forceRefresh = bookkeeping.forceRefresh
                if role == .primary {
                    primaryUnderWay = true
                    states.update(.connecting)
                }
                group.addTask {
                    guard await auth.isSignedIn() else {
                        if role == .successor {
                            return .link(id: id, role: role, report: LinkReport(end: .openFailed("signed out", authRejected: false)))
                        }
                        return .stopped(.signedOut, .signedOut)
                    }
                    let credentials: AuthCredentials
                    do {
                        credentials = try await auth.credentials(forceRefresh: forceRefresh)
                    } catch {
                        if role == .successor {
                            return .link(id: id, role: role, report: LinkReport(end: .openFailed("no credentials", authRejected: false)))
                        }
                        return .stopped(.sessionExpired, .sessionExpired("credentials unavailable: \(error)"))
                    }
                    let (request, driver) = transport.makeLink(id: id, credentials: credentials, role: role)
                    let report = await runner.run(id: id, connector: connector, request: request, driver: driver, registry: registry)
                    return .link(id: id, role: role, report: report)
                }
            }
            func connectIfWanted() {
                guard transport.wantsConnection else {
                    waitingForPath = false
                    states.update(.idle)
                    return
                }
                guard pathSatisfied() else {
                    if !waitingForPath { logger.info("no network: the connection waits for it") }
                    waitingForPath = true
                    return
                }
                waitingForPath = false
                start(.primary)
            }
            /// Ends the backoff sleep under way; `true` if there was one.
            func cancelBackoff() -> Bool {
                guard let current = backoff else { return false }
                backoff = nil
                current.cancel.fire()
                return true
            }
            /// A transport waiting to reconnect (backing off, or waiting for the network) connects now.
            func reconnectNow(_ why: String) {
                guard !primaryUnderWay, cancelBackoff() || waitingForPath else { return }
                logger.info("reconnecting now, skipping the backoff", metadata: ["why": "\(why)"])
                connectIfWanted()
            }
            func probeOpenLinks(_ why: String) {
                let probed = registry.probeAll(timeout: runner.liveness.probeTimeout)
                if probed > 0 { logger.info("probing the open links", metadata: ["why": "\(why)", "links": "\(probed)"]) }
            }

            listen()
            watchPath()
            connectIfWanted()
            while let step = await group.next() {
                // Cancelled (disconnect): let the links wind down; the transport ends its streams itself.
                if Task.isCancelled { continue }
                switch step {
                case .request(nil):
                    group.cancelAll()
                case .request(.demandChanged?):
                    listen()
                    if !primaryUnderWay && backoff == nil { connectIfWanted() }
                case .request(.rotate?):
                    // The transport asks for one rotation at a time; a successor that turns out unwanted is closed.
                    listen()
                    if primaryUnderWay { start(.successor) }
                case .request(.verifyConnection?):
                    listen()
                    probeOpenLinks("verifyConnection")
                    if pathSatisfied() { reconnectNow("verifyConnection") }
                case .path(let new?):
                    watchPath()
                    let old = path
                    path = new
                    guard let old, old != new else { continue }
                    logger.info("network path changed", metadata: ["from": "\(old)", "to": "\(new)"])
                    if !new.isSatisfied {
                        // No attempts and no timer while there is no network; the wanted connection waits for it.
                        if cancelBackoff() {
                            waitingForPath = true
                            logger.info("no network: the reconnect waits for it")
                        }
                    } else if !old.isSatisfied {
                        reconnectNow("the network is back")
                        probeOpenLinks("the network is back")
                    } else if old.interface != new.interface {
                        probeOpenLinks("the network interface changed")
                        reconnectNow("the network interface changed")
                    }
                case .path(nil):
                    break  // the monitor ended: the last path stands
                case .stopped(let reason, let error):
                    transport.stop(reason, error: error)
                    group.cancelAll()
                case .backoffElapsed(let id):
                    guard backoff?.id == id else { continue }  // cancelled, and handled when it was
                    backoff = nil
                    if !primaryUnderWay { connectIfWanted() }
                case .link(let id, let role, let report):
                    guard case .lost(let ending) = transport.linkEnded(id: id, role: role, report: report) else { continue }
                    primaryUnderWay = false
                    if report.acknowledged { bookkeeping.connected() }
                    logger.info(
                        "connection ended",
                        metadata: ["link": "\(id)", "reason": "\(report.end)", "close": "\(report.close.map { "\($0)" } ?? "-")"])
                    switch bookkeeping.decide(after: ending) {
                    case .idle, .connectNow:
                        connectIfWanted()
                    case .connectAfter(let delay, let attempt):
                        states.update(.reconnecting(attempt: attempt, delay: delay))
                        guard pathSatisfied() else {
                            logger.info("no network: the reconnect waits for it", metadata: ["attempt": "\(attempt)"])
                            waitingForPath = true
                            continue
                        }
                        logger.info("reconnecting", metadata: ["attempt": "\(attempt)", "delay": "\(delay)"])
                        let backoffID = nextBackoffID
                        nextBackoffID += 1
                        let cancel = OneShotSignal<Void>()
                        backoff = (backoffID, cancel)
                        let clock = runner.clock
                        let deadline = clock.now.advanced(by: delay)
                        group.addTask {
                            _ = await race(clock: clock, deadline: deadline, signal: cancel)
                            return .backoffElapsed(backoffID)
                        }
                    case .stop(let reason, let error):
                        transport.stop(reason, error: error)
                        group.cancelAll()
                    }
                }
            }
        }
    }
}

/// The supervisor's single consumer of its request stream, handed from one listening child task to the next (never
/// two at once), which is why the non-`Sendable` iterator may live here.
private final class SupervisorInbox: @unchecked Sendable {
    private var iterator: AsyncStream<SupervisorRequest>.AsyncIterator

    init(_ stream: AsyncStream<SupervisorRequest>) { iterator = stream.makeAsyncIterator() }

    func next() async -> SupervisorRequest? { await iterator.next() }
}

/// The supervisor's single consumer of the path monitor's stream, handed from one listening child task to the next.
private final class PathInbox: @unchecked Sendable {
    private var iterator: AsyncStream<NetworkPath>.AsyncIterator

    init(_ stream: AsyncStream<NetworkPath>) { iterator = stream.makeAsyncIterator() }

    func next() async -> NetworkPath? { await iterator.next() }
}
