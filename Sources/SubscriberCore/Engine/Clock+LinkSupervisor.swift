import Logging

extension Clock where Duration == Swift.Duration {
    /// Starts a transport's supervisor on this clock: the transport's one task, which owns every link (cancel it and
    /// await it to end them all). A member of `Clock`, so a transport's existential clock opens to its concrete type.
    package func startLinkSupervisor(
        policy: ReconnectPolicy, auth: any AuthSession, connector: any WebSocketConnector, wallClock: WallClock,
        states: ConnectionStateBroadcaster, logger: Logger, ackTimeout: Swift.Duration, rotateAfter: Swift.Duration?,
        liveness: LivenessSettings, pathMonitor: (any NetworkPathMonitor)?, transport: any SupervisedTransport,
        requests: AsyncStream<SupervisorRequest>
    ) -> Task<Void, Never> {
        let parts = SupervisorParts(
            policy: policy, auth: auth, connector: connector, wallClock: wallClock, states: states, logger: logger,
            ackTimeout: ackTimeout, rotateAfter: rotateAfter, liveness: liveness, pathMonitor: pathMonitor, transport: transport,
            requests: requests)
        // The production clock gets code specialised for it: a transport's existential clock otherwise opens to a type
        // known only at run time, and the per-frame path pays generic metadata lookups for it.
        if let continuous = self as? ContinuousClock { return parts.start(on: continuous) }
        return parts.start(on: self)
    }
}

/// What a supervisor is started with, so the start can be written once for any clock.
private struct SupervisorParts: Sendable {
    let policy: ReconnectPolicy
    let auth: any AuthSession
    let connector: any WebSocketConnector
    let wallClock: WallClock
    let states: ConnectionStateBroadcaster
    let logger: Logger
    let ackTimeout: Duration
    let rotateAfter: Duration?
    let liveness: LivenessSettings
    let pathMonitor: (any NetworkPathMonitor)?
    let transport: any SupervisedTransport
    let requests: AsyncStream<SupervisorRequest>

    func start<C: Clock>(on clock: C) -> Task<Void, Never> where C.Duration == Duration {
        let runner = LinkRunner(
            clock: clock, wallClock: wallClock, logger: logger, ackTimeout: ackTimeout, rotateAfter: rotateAfter, liveness: liveness)
        let supervisor = LinkSupervisor(
            policy: policy, auth: auth, connector: connector, runner: runner, states: states, logger: logger, pathMonitor: pathMonitor)
        return Task { [transport, requests] in await supervisor.run(transport, requests: requests) }
    }
}
