import Logging

extension Clock where Duration == Swift.Duration {
    /// Starts a transport's supervisor on this clock: the transport's one task, which owns every link (cancel it and
    /// await it to end them all). A member of `Clock`, so a transport's existential clock opens to its concrete type.
    package func startLinkSupervisor(
        policy: ReconnectPolicy, auth: any AuthSession, connector: any WebSocketConnector, wallClock: WallClock,
        states: ConnectionStateBroadcaster, logger: Logger, ackTimeout: Swift.Duration, rotateAfter: Swift.Duration?,
        transport: some SupervisedTransport, requests: AsyncStream<SupervisorRequest>
    ) -> Task<Void, Never> {
        let runner = LinkRunner(clock: self, wallClock: wallClock, logger: logger, ackTimeout: ackTimeout, rotateAfter: rotateAfter)
        let supervisor = LinkSupervisor(policy: policy, auth: auth, connector: connector, runner: runner, states: states, logger: logger)
        return Task { await supervisor.run(transport, requests: requests) }
    }
}
