import BackendNotifier
import Foundation
import Logging
import SubscriberCore

/// Automatic failover, done with the rollback path: when the active transport cannot stay connected (not connected
/// for `unhealthyAfterSeconds`, its established connection lost `maxFailures` times within `failureWindowSeconds`, or
/// it gave up), switch to the other one; fail back only after the preferred transport has stayed connected for
/// `failbackAfterSeconds` (no flapping).
///
/// It holds the stack's parts, never the stack: the stack's scope runs it, so releasing the stack (or
/// ``RealtimeStack/shutdown()``) cancels it and frees the notifier and its transports.
struct FailoverRun: Sendable {
    let notifier: BackendNotifier
    let settings: RealtimeConfiguration.FailoverConfiguration
    /// The configured transport, failed back to.
    let preferred: RealtimeConfiguration.TransportKind
    /// Whether this run is failing back, shared with the stack (which ends it for a switch the app asks for).
    let phase: FailbackPhase
    /// A new, unconnected transport of a kind (the stack's ``TransportFactory/make(_:)``).
    let makeTransport: @Sendable (RealtimeConfiguration.TransportKind) throws -> any RealtimeTransport
    /// The device's network path (the stack's ``TransportFactory/networkPathMonitor``); `nil`: always usable.
    let pathMonitor: (any NetworkPathMonitor)?
    let clock: any Clock<Duration>
    let wallClock: WallClock
    let logger: Logger

    /// What watching the active transport found.
    enum Verdict: Equatable {
        /// It is unhealthy, for this reason.
        case unhealthy(String)
        /// It is no longer the active transport: watch the one that is.
        case replaced
    }

    /// Asks the notifier to switch to `kind`, which decides when the switch's turn comes whether the active transport
    /// is already of that kind. Returns whether the active transport changed meanwhile (this switch, or another one
    /// that ran before it).
    func switchTransport(to kind: RealtimeConfiguration.TransportKind, because reason: TransportSwitchReason) async throws -> Bool {
        let target = try makeTransport(kind)
        let before = await notifier.activeTransport
        try await notifier.switchTransport(to: target, because: reason, onlyFromOtherDialect: true)
        return await notifier.activeTransport as AnyObject !== before as AnyObject
    }

    /// A switch the app asked for (``RealtimeStack/switchTransport(to:)``). Returns whether the watch must start again
    /// on the active transport: the switch changed it, or it ended a failback under way (the app asked for the transport
    /// failed over to, which the notifier found already active: a failback would undo the request).
    func requestSwitch(to kind: RealtimeConfiguration.TransportKind) async throws -> Bool {
        let switched = try await switchTransport(to: kind, because: .requested)
        // Marked even when it switched (another switch may have run before it): a failback queued behind it is undone.
        let interrupted = kind != preferred && phase.interrupt()
        return switched || interrupted
    }

    /// Watches, fails over and fails back until cancelled or the notifier is shut down.
    func run() async {
        // The deadlines' own scope: it lives as long as this run.
        let scope = TaskScope()
        defer { scope.close() }
        while !Task.isCancelled {
            guard let (transport, verdict) = await waitUntilUnhealthy(scope: scope) else { return }
            guard case .unhealthy(let problem) = verdict else { continue }
            let from = RealtimeStack.kind(of: transport.dialect)
            let target = from.other
            // A failover from the preferred transport starts a failback: marked before its switch is asked for, so a
            // switch the app asks for from now on ends it.
            if target != preferred { phase.begin() }
            logger.warning("failing over", metadata: ["from": "\(from)", "to": "\(target)", "reason": "\(problem)"])
            do {
                _ = try await switchTransport(to: target, because: .failover(problem))
            } catch {
                logger.warning("failover failed; staying", metadata: ["error": "\(error)"])
                phase.end()
                do { try await clock.sleepReleasingOnCancel(for: .seconds(settings.unhealthyAfterSeconds)) } catch { return }
                continue
            }
            guard RealtimeStack.kind(of: await notifier.activeDialect) != preferred else {
                phase.end()
                continue
            }
            guard await failBack(scope: scope) else { return }
            phase.end()
        }
    }

    /// Probes the preferred transport and fails back to it once healthy. A failback that fails is probed for again
    /// `unhealthyAfterSeconds` later, unless the preferred transport is active by then. Returns `false` when cancelled,
    /// the notifier was shut down, or a switch the app asked for ended the failback.
    func failBack(scope: TaskScope) async -> Bool {
        while true {
            guard await waitUntilHealthy(preferred, scope: scope), !phase.isInterrupted else { return false }
            do {
                if try await switchTransport(to: preferred, because: .failback), phase.isInterrupted {
                    // The app asked for the fallback while this switch waited its turn: the last one asked for wins.
                    _ = try? await switchTransport(to: preferred.other, because: .requested)
                }
                return true
            } catch {
                logger.warning("failback failed; will probe again", metadata: ["error": "\(error)"])
            }
            let probeAgain = Duration.seconds(settings.unhealthyAfterSeconds)
            do { try await clock.sleepReleasingOnCancel(for: probeAgain) } catch { return false }
            guard RealtimeStack.kind(of: await notifier.activeDialect) != preferred else { return true }
        }
    }

    /// Watches the active transport until it is unhealthy or another one becomes active. Returns the transport watched
    /// and the verdict, or `nil` when cancelled or the notifier was shut down.
    func waitUntilUnhealthy(scope: TaskScope) async -> (any RealtimeTransport, Verdict)? {
        // Switches are observed from before the active transport is read: none is missed.
        let events = await notifier.connectionEvents()
        let transport = await notifier.activeTransport
        let states = await transport.connectionStates()
        let (settings, wallClock, notifier) = (settings, wallClock, notifier)
        let deadline = FailoverDeadline(scope: scope, clock: clock)
        let (verdicts, verdict) = AsyncStream<Verdict?>.makeStream()
        let found = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    if case .transportSwitched = event { verdict.yield(.replaced) }
                }
                verdict.yield(nil)  // the notifier was shut down
            }
            if let pathMonitor {
                group.addTask {
                    // Without a network the transport makes no attempts and only waits for it: not unhealthy. The
                    // deadline waits too, and gives the transport a whole window once the network is back.
                    for await path in pathMonitor.paths() { deadline.hold(!path.isSatisfied) }
                }
            }
            group.addTask {
                var losses: [Date] = []
                var wasConnected = false
                for await state in states {
                    switch state {
                    case .connected:
                        wasConnected = true
                        deadline.disarm()
                    case .idle:
                        wasConnected = false
                        deadline.disarm()
                    case .connecting, .reconnecting:
                        // A failure is an established connection lost (not to a lost network); failed attempts within
                        // one outage count toward `unhealthyAfterSeconds` instead.
                        if case .reconnecting = state, wasConnected, !deadline.isHeld {
                            let now = wallClock.now()
                            losses = losses.filter { now.timeIntervalSince($0) <= settings.failureWindowSeconds } + [now]
                            if losses.count >= settings.maxFailures {
                                verdict.yield(.unhealthy("\(losses.count) connections lost within \(Int(settings.failureWindowSeconds)) s"))
                            }
                        }
                        wasConnected = false
                        deadline.arm(after: .seconds(settings.unhealthyAfterSeconds)) {
                            verdict.yield(.unhealthy("not connected for \(Int(settings.unhealthyAfterSeconds)) s"))
                        }
                    case .disconnected(let reason):
                        // Only a transport that gave up is unhealthy: one disconnected on request (suspended in the
                        // background, switched away from), signed out or with an expired session is not, and its
                        // deadline set while it was reconnecting no longer holds.
                        wasConnected = false
                        deadline.disarm()
                        if case .failed = reason {
                            verdict.yield(.unhealthy("transport gave up: \(reason)"))
                        } else if await notifier.activeTransport as AnyObject !== transport as AnyObject {
                            verdict.yield(.replaced)
                        }
                    }
                }
                deadline.disarm()
                // Its states end only when it is released, so it is no longer active.
                verdict.yield(.replaced)
            }
            var iterator = verdicts.makeAsyncIterator()
            let found = await iterator.next() ?? nil
            group.cancelAll()
            return found
        }
        deadline.disarm()
        return found.map { (transport, $0) }
    }

    /// How one failback probe ended.
    enum ProbeOutcome: Equatable {
        /// It stayed connected for `failbackAfterSeconds`.
        case healthy
        /// It gave up (disconnected, or its stream ended), or no probe could be made.
        case gaveUp
        /// The notifier's identity changed: the probe was subscribed for another user.
        case identityChanged
        /// The notifier stopped running upstreams (suspended, its session ended): probe again once it runs them.
        case paused
        /// Cancelled, or the notifier was shut down.
        case ended
    }

    /// Probes `kind` with one subscription, for the notifier's identity, until it has stayed connected for
    /// `failbackAfterSeconds`. A probe that gives up (disconnected, or its stream ends) is disconnected and,
    /// `unhealthyAfterSeconds` later, made again; one whose identity changes is disconnected and made again at once for
    /// the new one. While signed out, nothing is probed until someone signs in. Returns `false` when cancelled or the
    /// notifier was shut down.
    func waitUntilHealthy(_ kind: RealtimeConfiguration.TransportKind, scope: TaskScope) async -> Bool {
        while !Task.isCancelled {
            switch await probe(kind, scope: scope) {
            case .healthy: return true
            case .ended: return false
            case .identityChanged, .paused: continue
            case .gaveUp:
                do { try await clock.sleepReleasingOnCancel(for: .seconds(settings.unhealthyAfterSeconds)) } catch { return false }
            }
        }
        return false
    }

    /// The notifier's identity once someone is signed in (at once when someone is), or `nil` when cancelled or the
    /// notifier was shut down.
    private func signedInIdentity() async -> NotifierIdentity? {
        for await identity in notifier.identityChanges() where identity.userId != nil { return identity }
        return nil
    }

    /// The notifier's identity once someone is signed in and the notifier runs upstreams (at once when so), or `nil`
    /// when cancelled or the notifier was shut down.
    private func runningIdentity() async -> NotifierIdentity? {
        while true {
            guard await notifier.runsUpstreamsChanges().first(where: { $0 }) != nil,
                let identity = await signedInIdentity()
            else { return nil }
            if notifier.runsUpstreams { return identity }
        }
    }

    /// One probe, subscribed for the identity of when it starts, while the notifier runs upstreams.
    private func probe(_ kind: RealtimeConfiguration.TransportKind, scope: TaskScope) async -> ProbeOutcome {
        let (settings, notifier) = (settings, notifier)
        guard let identity = await runningIdentity() else { return .ended }
        guard let probe = try? makeTransport(kind),
            let request = notifier.healthProbeRequest(for: probe.dialect, identity: identity)
        else { return .gaveUp }
        let deadline = FailoverDeadline(scope: scope, clock: clock)
        let states = await probe.connectionStates()
        let probeStream = await probe.subscribe(request)
        let (verdicts, verdict) = AsyncStream<ProbeOutcome>.makeStream()
        let outcome = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Keep the probe subscription open; its events are ignored. Its end is the probe's.
                do { for try await _ in probeStream {} } catch {}
                verdict.yield(.gaveUp)
            }
            group.addTask {
                // Starts with the current identity, which may already differ from the probe's.
                for await current in notifier.identityChanges() where current != identity {
                    verdict.yield(.identityChanged)
                    return
                }
                verdict.yield(.ended)  // the notifier was shut down
            }
            group.addTask {
                // Suspended, or the session ended: no probe until the notifier runs upstreams again.
                for await running in notifier.runsUpstreamsChanges() where !running {
                    verdict.yield(.paused)
                    return
                }
                verdict.yield(.ended)
            }
            group.addTask {
                for await state in states {
                    switch state {
                    case .connected:
                        deadline.arm(after: .seconds(settings.failbackAfterSeconds)) { verdict.yield(.healthy) }
                    case .disconnected:
                        deadline.disarm()
                        verdict.yield(.gaveUp)
                    case .idle, .connecting, .reconnecting:
                        deadline.disarm()
                    }
                }
                deadline.disarm()
                verdict.yield(.gaveUp)
            }
            var iterator = verdicts.makeAsyncIterator()
            let outcome = await iterator.next()
            group.cancelAll()
            return outcome
        }
        deadline.disarm()
        await probe.disconnect()
        return Task.isCancelled ? .ended : outcome ?? .ended
    }
}

/// Whether a failover run is failing back: from its decision to fail over from the preferred transport until it has
/// failed back or watches again. Shared by the run and its stack, never holding either: a switch the app asks for
/// meanwhile ends the failback (``FailoverRun/requestSwitch(to:)``).
final class FailbackPhase: Sendable {
    private struct State {
        var failingBack = false
        var interrupted = false
    }

    private let state = Locked(State())

    /// The run decided to fail over from the preferred transport.
    func begin() { state.withLock { $0 = State(failingBack: true) } }

    /// The run watches the active transport again.
    func end() { state.withLock { $0 = State() } }

    /// Ends the failback under way for a switch the app asked for; returns whether there was one.
    func interrupt() -> Bool {
        state.withLock { state in
            guard state.failingBack else { return false }
            state.interrupted = true
            return true
        }
    }

    /// Whether a switch the app asked for ended the failback.
    var isInterrupted: Bool { state.withLock { $0.interrupted } }
}
