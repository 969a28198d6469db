import BackendNotifier
import Foundation
import Logging
import SubscriberCore

/// Automatic failover, done with the rollback path: when the active transport cannot stay connected (not connected
/// for `unhealthyAfterSeconds`, `maxFailures` reconnects within `failureWindowSeconds`, or it gave up), switch to the
/// other one; fail back only after the preferred transport has stayed connected for `failbackAfterSeconds` (no flapping).
extension RealtimeStack {
    func runFailover() async {
        let preferred = configuration.transport
        while !Task.isCancelled {
            let transport = await notifier.activeTransport
            guard let problem = await waitUntilUnhealthy(transport) else { return }
            let from = await activeKind
            let target = from.other
            logger.warning("failing over", metadata: ["from": "\(from)", "to": "\(target)", "reason": "\(problem)"])
            do {
                try await switchTransport(to: target, because: .failover(problem))
            } catch {
                logger.warning("failover failed; staying", metadata: ["error": "\(error)"])
                do { try await clock.sleepReleasingOnCancel(for: .seconds(configuration.failover.unhealthyAfterSeconds)) } catch { return }
                continue
            }
            guard await activeKind != preferred else { continue }
            guard await waitUntilHealthy(preferred) else { return }
            do {
                try await switchTransport(to: preferred, because: .failback)
            } catch {
                logger.warning("failback failed; will probe again", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Returns why `transport` is unhealthy, or `nil` when cancelled.
    private func waitUntilUnhealthy(_ transport: any RealtimeTransport) async -> String? {
        let settings = configuration.failover
        let wallClock = self.wallClock
        let deadline = FailoverDeadline(scope: scope, clock: clock)
        let states = await transport.connectionStates()
        let (verdicts, verdict) = AsyncStream<String>.makeStream()
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var reconnects: [Date] = []
                for await state in states {
                    switch state {
                    case .connected, .idle:
                        deadline.disarm()
                    case .connecting, .reconnecting:
                        if case .reconnecting = state {
                            let now = wallClock.now()
                            reconnects = reconnects.filter { now.timeIntervalSince($0) <= settings.failureWindowSeconds } + [now]
                            if reconnects.count >= settings.maxFailures {
                                verdict.yield("\(reconnects.count) reconnects within \(Int(settings.failureWindowSeconds)) s")
                            }
                        }
                        deadline.arm(after: .seconds(settings.unhealthyAfterSeconds)) {
                            verdict.yield("not connected for \(Int(settings.unhealthyAfterSeconds)) s")
                        }
                    case .disconnected(let reason):
                        if case .failed = reason { verdict.yield("transport gave up: \(reason)") }
                    }
                }
                deadline.disarm()
            }
            var iterator = verdicts.makeAsyncIterator()
            let problem = await iterator.next()
            group.cancelAll()
            return problem
        }
    }

    /// Probes `kind` with one subscription until it has stayed connected for `failbackAfterSeconds`.
    /// Returns `false` when cancelled.
    private func waitUntilHealthy(_ kind: RealtimeConfiguration.TransportKind) async -> Bool {
        let settings = configuration.failover
        let deadline = FailoverDeadline(scope: scope, clock: clock)
        guard let probe = try? factory.make(kind), let request = await notifier.healthProbeRequest(for: probe.dialect) else { return false }
        let states = await probe.connectionStates()
        let probeStream = await probe.subscribe(request)
        let (verdicts, verdict) = AsyncStream<Bool>.makeStream()
        let healthy = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Keep the probe subscription open; its events are ignored.
                do { for try await _ in probeStream {} } catch {}
            }
            group.addTask {
                for await state in states {
                    if state == .connected {
                        deadline.arm(after: .seconds(settings.failbackAfterSeconds)) { verdict.yield(true) }
                    } else {
                        deadline.disarm()
                    }
                }
                deadline.disarm()
            }
            var iterator = verdicts.makeAsyncIterator()
            let healthy = await iterator.next() ?? false
            group.cancelAll()
            return healthy
        }
        await probe.disconnect()
        return healthy
    }
}
