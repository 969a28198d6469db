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
package struct LinkSupervisor<C: Clock>: Sendable where C.Duration == Duration {
    package let policy: ReconnectPolicy
    package let auth: any AuthSession
    package let connector: any WebSocketConnector
    package let runner: LinkRunner<C>
    package let states: ConnectionStateBroadcaster
    package let logger: Logger

    package init(
        policy: ReconnectPolicy, auth: any AuthSession, connector: any WebSocketConnector, runner: LinkRunner<C>,
        states: ConnectionStateBroadcaster, logger: Logger
    ) {
        self.policy = policy
        self.auth = auth
        self.connector = connector
        self.runner = runner
        self.states = states
        self.logger = logger
    }

    private enum Step: Sendable {
        case request(SupervisorRequest?)
        case link(id: Int, role: LinkRole, report: LinkReport)
        case stopped(DisconnectReason, RealtimeError)
        case backoffElapsed
    }

    /// Runs until the transport stops (signed out, session expired, the policy gave up) or the task is cancelled.
    package func run(_ transport: any SupervisedTransport, requests: AsyncStream<SupervisorRequest>) async {
        let inbox = SupervisorInbox(requests)
        await withTaskGroup(of: Step.self) { group in
            var bookkeeping = ReconnectBookkeeping(policy: policy)
            var nextID = 0
            var primaryUnderWay = false
            var backingOff = false

            func listen() { group.addTask { .request(await inbox.next()) } }
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
                    let report = await runner.run(id: id, connector: connector, request: request, driver: driver)
                    return .link(id: id, role: role, report: report)
                }
            }
            func connectIfWanted() {
                if transport.wantsConnection { start(.primary) } else { states.update(.idle) }
            }

            listen()
            connectIfWanted()
            while let step = await group.next() {
                // Cancelled (disconnect): let the links wind down; the transport ends its streams itself.
                if Task.isCancelled { continue }
                switch step {
                case .request(nil):
                    group.cancelAll()
                case .request(.demandChanged?):
                    listen()
                    if !primaryUnderWay && !backingOff && transport.wantsConnection { start(.primary) }
                case .request(.rotate?):
                    // The transport asks for one rotation at a time; a successor that turns out unwanted is closed.
                    listen()
                    if primaryUnderWay { start(.successor) }
                case .stopped(let reason, let error):
                    transport.stop(reason, error: error)
                    group.cancelAll()
                case .backoffElapsed:
                    backingOff = false
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
                        backingOff = true
                        states.update(.reconnecting(attempt: attempt, delay: delay))
                        logger.info("reconnecting", metadata: ["attempt": "\(attempt)", "delay": "\(delay)"])
                        let clock = runner.clock
                        group.addTask {
                            try? await clock.sleep(for: delay, tolerance: nil)
                            return .backoffElapsed
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
