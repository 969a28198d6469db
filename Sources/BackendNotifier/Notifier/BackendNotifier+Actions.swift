import Foundation
import Logging
import SubscriberCore

extension BackendNotifier {
    func perform(_ actions: [NotifierStateMachine.Action]) {
        for action in actions { perform(action) }
    }

    /// Performs one action of the state machine. Only the disconnects and the connection check take time: they run
    /// as tasks of the scope, and a disconnect reports back when it is done.
    func perform(_ action: NotifierStateMachine.Action) {
        switch action {
        case .startUpstream(let start): startUpstream(start)
        case .stopUpstream(let run): runs.stop(run)
        case .beginOverlap(let change, let upstream, let old, let from, let to):
            let overlap = SwitchOverlap(
                upstream: upstream, router: router, events: events, old: SwitchOverlap.Side(dialect: from.dialect, name: from.name),
                new: SwitchOverlap.Side(dialect: to.dialect, name: to.name))
            runs.beginOverlap(change, overlap, old: old)
        case .cutOver(let change): runs.cutOver(change)
        case .endOverlap(let change): runs.endOverlap(change)
        case .disconnect(let id, let token):
            guard let transport = transports[id] else { return }
            scope.spawn { [weak self] in
                await transport.disconnect()
                await self?.receive(.disconnected(token: token))
            }
        case .verifyConnection(let id):
            guard let transport = transports[id] else { return }
            scope.spawn { await transport.verifyConnection() }
        case .activate(let target): losses.activeName.withLock { $0 = target.name }
        case .forgetTransport(let id): transports.remove(id)
        case .followStates(let id):
            guard let transport = transports[id] else { return }
            replace(.stateFollower) { [weak self] in
                for await state in await transport.connectionStates() {
                    guard let self, !Task.isCancelled else { return }
                    await self.receive(
                        .transportStateChanged(
                            state, transport: id, lastFailure: transport.lastConnectionFailure, lostAt: transport.connectionLostAt))
                }
            }
        case .stopFollowingStates: chores.removeValue(forKey: .stateFollower)?.cancel()
        case .emit(let event): events.yield(event)
        case .publishState(let state): states.update(state)
        case .armTimer(let timer, let token, let duration):
            replace(.timer(timer)) { [weak self, clock] in
                do { try await clock.sleepReleasingOnCancel(for: duration) } catch { return }
                await self?.receive(.timerFired(timer, token: token))
            }
        case .cancelTimer(let timer): chores.removeValue(forKey: .timer(timer))?.cancel()
        case .completeOperation(let operation): waiters.complete(operation)
        case .failOperation(let operation, let error): waiters.fail(operation, error)
        case .metric(let metric): metrics.record(metric)
        case .log(let entry):
            logger.log(level: entry.level, "\(entry.message)", metadata: entry.metadata.mapValues { .string($0) })
        }
    }

    private func replace(_ chore: Chore, with work: @escaping @Sendable () async -> Void) {
        chores[chore]?.cancel()
        chores[chore] = scope.spawn(work)
    }

    private func startUpstream(_ start: NotifierStateMachine.RunStart) {
        guard let transport = transports[start.transport.id],
            let request = start.upstream.request(
                dialect: transport.dialect, userId: start.identity.userId, organizationId: start.identity.organizationId,
                namespace: configuration.channelNamespace, operations: configuration.graphQLOperations)
        else { return }
        let mode: UpstreamDelivery.Mode
        switch start.delivery {
        case .open: mode = .open
        case .held(let change):
            guard let overlap = runs.overlap(change, start.upstream) else { return }
            mode = .new(overlap)
        }
        let pump = UpstreamPump(
            id: start.run, transport: transport, request: request, delivery: UpstreamDelivery(mode), router: router, events: events)
        let task = scope.spawn { [weak self] in
            await pump.run { [weak self] event in await self?.receive(event) }
        }
        runs.add(start.run, UpstreamRuns.Pump(task: task, delivery: pump.delivery))
    }
}
