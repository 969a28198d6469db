/// How one of the supervisor's attempts ended: the link ran and ended as `report` says, `lasted` after the attempt
/// began, or a primary link got no credentials (``SupervisorStateMachine/noCredentials(_:wantsConnection:)``).
package enum LinkAttempt: Sendable {
    /// The link ran, or failed before it could (no credentials in time, a successor without them, cancelled).
    case ran(LinkReport, lasted: Duration = .zero)
    /// A primary got `signedOut`, or the `sessionExpired` the session's throw became.
    case noCredentials(RealtimeError)
}

extension LinkRunner {
    /// One link's life: sign-in and credentials first, then the link. Without them a primary leaves it to the
    /// supervisor's state machine (signed out: stop; the session threw: retry a few times); a successor just fails. A
    /// session that does not answer within the ack timeout fails the attempt, which is retried after the backoff like
    /// any other (see ``ConnectCredentials``).
    package func attempt(
        id: Int, role: LinkRole, forceRefresh: Bool, credentials: ConnectCredentials, connector: any WebSocketConnector,
        transport: any SupervisedTransport, registry: LinkRegistry
    ) async -> LinkAttempt {
        guard let answer = await credentials.ask(forceRefresh: forceRefresh, timeout: ackTimeout, clock: clock) else {
            return .ran(LinkReport(end: .credentialsTimeout(ackTimeout)))
        }
        let failure: RealtimeError
        switch answer {
        case .credentials(let credentials):
            let (request, driver) = transport.makeLink(id: id, credentials: credentials, role: role)
            let started = clock.now
            let report = await run(id: id, connector: connector, request: request, driver: driver, registry: registry)
            return .ran(report, lasted: started.duration(to: clock.now))
        case .signedOut: failure = .signedOut
        case .unavailable(let error): failure = .sessionExpired("credentials unavailable: \(error)")
        case .cancelled: return .ran(LinkReport(end: .requested))
        }
        guard role == .primary else { return .ran(LinkReport(end: .openFailed("\(failure)", authRejected: false))) }
        return .noCredentials(failure)
    }
}
