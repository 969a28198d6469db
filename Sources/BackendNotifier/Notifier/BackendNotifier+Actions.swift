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
        case .stopUpstream(let run):
            guard let pump = pumps.removeValue(forKey: run) else { return }
            pump.delivery.close()
            pump.task.cancel()
        case .beginOverlap(let change, let upstream, let old, let from, let to):
            let overlap = SwitchOverlap(
                upstream: upstream, router: router, events: events, old: SwitchOverlap.Side(dialect: from.dialect, name: from.name),
                new: SwitchOverlap.Side(dialect: to.dialect, name: to.name), wallClock: wallClock)
            overlaps[change, default: [:]][upstream] = overlap
            if let old, let pump = pumps[old] { pump.delivery.set(.old(overlap)) }
        case .cutOver(let change):
            for overlap in overlaps[change].map({ Array($0.values) }) ?? [] { overlap.cutOver() }
        case .endOverlap(let change):
            for overlap in overlaps.removeValue(forKey: change).map({ Array($0.values) }) ?? [] {
                overlap.end()
                for pump in pumps.values { pump.delivery.reopen(after: overlap) }
            }
        case .disconnect(let id, let token):
            guard let transport = transports[id] else { return }
            scope.spawn { [weak self] in
                await transport.disconnect()
                await self?.receive(.disconnected(token: token))
            }
        case .verifyConnection(let id):
            guard let transport = transports[id] else { return }
            scope.spawn { await transport.verifyConnection() }
        case .activate(let target): activeName.withLock { $0 = target.name }
        case .forgetTransport(let id): transports[id] = nil
        case .followStates(let id, let watch):
            guard let transport = transports[id] else { return }
            stateFollower?.cancel()
            stateFollower = scope.spawn { [weak self] in
                for await state in await transport.connectionStates() {
                    guard let self, !Task.isCancelled else { return }
                    await self.receive(.transportStateChanged(state, watch: watch))
                }
            }
        case .stopFollowingStates:
            stateFollower?.cancel()
            stateFollower = nil
        case .emit(let event): events.yield(event)
        case .publishState(let state): states.update(state)
        case .armTimer(let timer, let token, let duration):
            timers[timer]?.cancel()
            timers[timer] = scope.spawn { [weak self, clock] in
                do { try await clock.sleep(for: duration, tolerance: nil) } catch { return }
                await self?.receive(.timerFired(timer, token: token))
            }
        case .cancelTimer(let timer): timers.removeValue(forKey: timer)?.cancel()
        case .completeOperation(let operation):
            switch waiters.removeValue(forKey: operation) {
            case .plain(let continuation)?: continuation.resume()
            case .throwing(let continuation)?: continuation.resume()
            case nil: break
            }
        case .failOperation(let operation, let error):
            switch waiters.removeValue(forKey: operation) {
            case .plain(let continuation)?: continuation.resume()
            case .throwing(let continuation)?: continuation.resume(throwing: error)
            case nil: break
            }
        case .metric(let metric): record(metric)
        case .log(let entry):
            logger.log(level: entry.level, "\(entry.message)", metadata: entry.metadata.mapValues { .string($0) })
        }
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
            guard let overlap = overlaps[change]?[start.upstream] else { return }
            mode = .new(overlap)
        }
        let pump = UpstreamPump(
            id: start.run, transport: transport, request: request, delivery: UpstreamDelivery(mode), router: router, events: events)
        let task = scope.spawn { [weak self] in
            await pump.run { [weak self] event in await self?.receive(event) }
        }
        pumps[start.run] = Pump(task: task, delivery: pump.delivery)
    }

    private func record(_ metric: NotifierStateMachine.Metric) {
        switch metric {
        case .connectionAttempt(let transport): metrics.connectionAttempt(transport: transport)
        case .reconnect(let transport): metrics.reconnect(transport: transport)
        case .connected(let seconds, let transport): metrics.connected(for: .seconds(seconds), transport: transport)
        case .transportSwitch(let from, let to): metrics.transportSwitch(from: from, to: to)
        }
    }
}
