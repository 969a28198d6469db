import Foundation
import Logging
import SubscriberCore

/// The notifier's lifecycle as a pure state machine: events in (``Event``), actions out (``Action``), no I/O, no
/// tasks and no clock of its own (each event comes with the wall-clock instant it happened at).
///
/// ``BackendNotifier`` is the shell around it: it feeds the public API's calls, the upstream pumps' reports, the
/// active transport's states, timers and finished disconnects in, and performs what comes out.
///
/// What it guarantees, visible in one place:
/// - **One operation at a time.** Identity updates, switches, suspension and resumption run one after the other, in
///   arrival order (``operation`` and ``queue``), except that an update to another identity goes ahead of the
///   switches queued after the last update; each completes when its effect is complete (a disconnect finished, a
///   cut-over done). An observer arriving during one starts when it ends, with the identity and transport it leaves
///   behind.
/// - **The identity is assigned before anything is disconnected**, and runs start only from the current identity and
///   outside operations, so no upstream ever subscribes with another identity than the current one.
/// - **One `sessionExpired`/`signedOut` per episode**, however many upstreams end with it; every upstream stays down
///   until `update(userId:organizationId:)`.
/// - **Make-before-break switches.** The new transport subscribes every observed upstream while the old one keeps
///   delivering; once every new subscription is live the old one delivers for `switchSettle` more (what was already
///   on its way over the old link), then the cut-over happens for all upstreams in one step. A requested switch over
///   a live old transport reports an empty window.
struct NotifierStateMachine: Sendable {
    /// The durations the machine arms timers with, and the loss margin.
    let settings: NotifierConfiguration
    /// Who is signed in, and whether their session still holds.
    private(set) var session: Session
    /// Foreground, suspended or shut down.
    private(set) var lifecycle: Lifecycle = .foreground
    private(set) var active: TransportRef
    /// The runs delivering (during a switch: the old transport's).
    private(set) var runs: [Upstream: Run] = [:]
    /// The upstreams observers ask for.
    private(set) var demand: Set<Upstream> = []
    private(set) var operation: Operation = .none
    private(set) var queue: [Queued] = []
    /// Where the window each upstream owes its observers starts (its suspension, or its failure: see ``upstreamEnded``),
    /// reported as its gap when it is live again.
    private var resumeGaps: [Upstream: Date] = [:]
    /// The active transport's states, the public state derived from them, and the network-error limit.
    private(set) var status = ConnectionStatus()
    /// The token of each armed timer (the network-error limit keeps its own in ``status``).
    private var timers: [Timer: Int] = [:]
    /// The switch whose new runs still de-duplicate against the old transport's deliveries.
    private var overlapSwitch: Int?
    /// The source of every token: runs, timers, disconnects, followings and switches.
    private var serial = 0
    private var output: [Action] = []

    init(settings: NotifierConfiguration, identity: Identity, active: TransportRef) {
        self.settings = settings
        self.session = .current(identity)
        self.active = active
    }

    /// Who is signed in (`userId` `nil`: nobody).
    var identity: Identity { session.identity }

    /// When the suspension began, while suspended.
    var suspendedAt: Date? {
        if case .suspended(let since) = lifecycle { since } else { nil }
    }

    /// What the app sees.
    var publicState: NotifierConnectionState { status.publicState }

    /// Whether an upstream subscription is delivering.
    var isConnectedUpstream: Bool { !runs.isEmpty }

    /// Operations waiting for the one running.
    var waitingOperations: Int { queue.count }

    // MARK: Events

    /// Handles `event`, which happened at `now`, and returns what to do, in order.
    mutating func handle(_ event: Event, now: Date) -> [Action] {
        if lifecycle == .shutDown {
            afterShutdown(event)
        } else {
            switch event {
            case .observed(let upstream): observed(upstream, now: now)
            case .unobserved(let upstream): unobserved(upstream, now: now)
            case .updateRequested(let identity, let operation): request(.update(identity, operation: operation), now: now)
            case .switchRequested(let target, let reason, let onlyFromOtherDialect, let operation):
                request(.switchTransport(target, reason, onlyFromOtherDialect: onlyFromOtherDialect, operation: operation), now: now)
            case .enteredBackground: enteredBackground()
            case .enteredForeground(let operation): enteredForeground(operation: operation, now: now)
            case .upstreamLive(let run): upstreamLive(run, now: now)
            case .upstreamResumed(let run): if runs[run.upstream]?.id == run { runs[run.upstream]?.interruptedSince = nil }
            case .upstreamEnded(let run, let error): upstreamEnded(run, error: error, now: now)
            case .transportStateChanged(let state, let id, let failure, let lostAt):
                transportStateChanged(state, transport: id, lastFailure: failure, lostAt: lostAt, now: now)
            case .timerFired(let timer, let token): timerFired(timer, token: token, now: now)
            case .disconnected(let token): disconnected(token: token, now: now)
            case .shutdown: shutdown()
            }
        }
        defer { output.removeAll() }
        return output
    }

    // MARK: Observers

    private mutating func observed(_ upstream: Upstream, now: Date) {
        demand.insert(upstream)
        // During an operation it starts when the operation ends (finishOperation), as the operation leaves things.
        guard operation == .none else { return }
        ensureRunning(upstream)
        refreshState(now: now)
    }

    private mutating func unobserved(_ upstream: Upstream, now: Date) {
        demand.remove(upstream)
        if let run = runs.removeValue(forKey: upstream) { act(.stopUpstream(run.id)) }
        if let dropped = updateSwitch({ $0.drop(upstream) }) {
            act(.stopUpstream(dropped.run))
            proceed(dropped.progress, now: now)
        }
        refreshState(now: now)
    }

    /// Starts `upstream` on the active transport if it is observed and allowed to run.
    private mutating func ensureRunning(_ upstream: Upstream) {
        guard runs[upstream] == nil, demand.contains(upstream), lifecycle == .foreground, session.allowsRuns else { return }
        let run = newRun(upstream, on: active)
        runs[upstream] = run
        act(.startUpstream(RunStart(run: run.id, transport: active, identity: identity, delivery: .open)))
        followStates()
    }

    private mutating func startDemanded(now: Date) {
        for upstream in Upstream.allCases { ensureRunning(upstream) }
        refreshState(now: now)
    }

    private mutating func newRun(_ upstream: Upstream, on transport: TransportRef) -> Run {
        serial += 1
        return Run(id: RunID(upstream: upstream, serial: serial), transport: transport)
    }

    /// Stops every delivering run (observers keep their streams); a run cut off by an outage still owes it.
    private mutating func stopUpstreams() {
        for upstream in Upstream.allCases {
            guard let run = runs.removeValue(forKey: upstream) else { continue }
            oweOutage(of: run)
            act(.stopUpstream(run.id))
        }
    }

    // MARK: Runs

    private mutating func upstreamLive(_ id: RunID, now: Date) {
        if let progress = updateSwitch({ $0.runLive(id) }) { return proceed(progress, now: now) }
        guard let run = runs[id.upstream], run.id == id else { return }
        runs[id.upstream]?.live = true
        if !reportResumeGap(of: id.upstream, on: run.transport, now: now) {
            emit(.live(stream: id.upstream.rawValue, transport: run.transport.name))
        }
    }

    /// `upstream` owes the window from `since` until it is live again; an earlier start it still owes stands.
    private mutating func oweResumeGap(of upstream: Upstream, since: Date) {
        resumeGaps[upstream] = min(resumeGaps[upstream] ?? since, since)
    }

    /// Reports the window `upstream` was stopped for (since a suspension or a failure it has not been live since), if
    /// any: what was on its way when it stopped is in the window too (the margin).
    private mutating func reportResumeGap(of upstream: Upstream, on transport: TransportRef, now: Date) -> Bool {
        guard let since = resumeGaps.removeValue(forKey: upstream) else { return false }
        let gap = GapWindow(start: since.addingTimeInterval(-settings.validLossMargin.timeInterval), end: now)
        emit(.resumed(stream: upstream.rawValue, transport: transport.name, gap: gap))
        return true
    }

    /// What a stream reports when its subscription ended without an error.
    static let endedByServer = RealtimeError.serverError(errorType: "SubscriptionEnded", message: "the subscription ended")

    private mutating func upstreamEnded(_ id: RunID, error: RealtimeError?, now: Date) {
        if case .switching(let change) = operation, change.isPrepared(id) { return abandonSwitch(error ?? .disconnected) }
        guard let run = runs[id.upstream], run.id == id else { return }
        runs[id.upstream] = nil
        act(.stopUpstream(id))
        markOldBroken()
        defer { refreshState(now: now) }
        // Ended without an error (GraphQL's `complete`, or a transport disconnected under the notifier): no more events
        // come, so the app hears of it as of any stream that stopped for good, rather than reading an empty stream.
        let error = error ?? Self.endedByServer
        switch error {
        case .sessionExpired, .signedOut:
            // One report per episode, however many upstreams end; the rest stop too until the app calls update.
            guard case .current(let identity) = session else { return }
            // A run not live again since its link was lost owes that outage, the ended one here and the others in
            // stopUpstreams (the same identity restarted reports it); any other window starts at the expiry, which the
            // app hears of.
            oweOutage(of: run)
            session = .ended(identity)
            stopUpstreams()
            // The new transport would be refused the same way: give the switch up.
            abandonSwitch(error)
            if case .signedOut = error { emit(.signedOut) } else { emit(.sessionExpired) }
        default:
            // No more events come until a restart: the stream owes the window from its failure, or from its link's loss
            // if it was not live again since (a resubscription refused after an outage), reported when a restart is live.
            if run.live { oweResumeGap(of: id.upstream, since: run.interruptedSince ?? now) }
            emit(.streamFailed(stream: id.upstream.rawValue, transport: run.transport.name, error: error))
            if case .networkError(let detail) = VortexError(error) { reportNetworkError(detail) }
        }
    }

    // MARK: Operations

    private mutating func request(_ queued: Queued, now: Date) {
        if operation == .none {
            start(queued, now: now)
        } else if let new = queued.identity {
            // Updates go ahead of queued switches, which would otherwise prepare with the identity being replaced.
            queue.insert(queued, at: queue.firstIndex { $0.isSwitch } ?? queue.endIndex)
            guard new != identity else { return }
            // Another identity: nothing delivers this one's events from now on, and a switch still preparing is given up.
            stopUpstreams()
            abandonSwitch(new.userId == nil ? .signedOut : .disconnected)
            refreshState(now: now)
        } else {
            queue.append(queued)
        }
    }

    private mutating func start(_ queued: Queued, now: Date) {
        switch queued {
        case .update(let identity, let operation): startUpdate(identity, operation: operation, now: now)
        case .switchTransport(let target, let reason, let onlyFromOtherDialect, let operation):
            startSwitch(to: target, reason: reason, onlyFromOtherDialect: onlyFromOtherDialect, operation: operation, now: now)
        case .suspend: startSuspend(now: now)
        case .resume(let operation): startResume(operation: operation, now: now)
        }
    }

    /// The operation is over: start what observers asked for meanwhile (unless another identity is queued: its update
    /// starts it), then the next operation.
    private mutating func finishOperation(now: Date) {
        operation = .none
        if queue.allSatisfy({ ($0.identity ?? identity) == identity }) { startDemanded(now: now) }
        while operation == .none, !queue.isEmpty {
            start(queue.removeFirst(), now: now)
        }
    }

    private mutating func disconnected(token: Int, now: Date) {
        switch operation {
        case .updating(let id, token, let signedOut):
            if signedOut { emit(.signedOut) }
            act(.completeOperation(id))
            finishOperation(now: now)
        case .suspending(token):
            emit(.suspended)
            finishOperation(now: now)
        case .switching(let change):
            switch change.stage {
            case .releasing(let old, token, let cutOverAt):
                switched(change, from: old, cutOverAt: cutOverAt, now: now)
            case .abandoning(token, let error):
                act(.forgetTransport(change.target.id))
                act(.failOperation(change.operation, error))
                finishOperation(now: now)
            default:
                break
            }
        default:
            break
        }
    }

    // MARK: Identity

    private mutating func startUpdate(_ newIdentity: Identity, operation id: Int, now: Date) {
        let changed = newIdentity != identity
        let stalled = lifecycle == .foreground && demand.contains { runs[$0] == nil }
        guard changed || session.hasEnded || (newIdentity.userId != nil && stalled) else {
            act(.completeOperation(id))
            return finishOperation(now: now)
        }
        endOverlap()
        stopUpstreams()
        session = .current(newIdentity)
        // The same identity restarted still owes its streams the windows they were stopped for.
        if changed { resumeGaps.removeAll() }
        status.startEpisode()
        refreshState(now: now)
        let token = nextToken()
        operation = .updating(operation: id, token: token, signedOut: newIdentity.userId == nil)
        act(.disconnect(transport: active.id, token: token))
    }

    // MARK: App lifecycle

    private mutating func enteredBackground() {
        arm(.backgroundGrace, after: settings.backgroundGrace)
    }

    private mutating func enteredForeground(operation id: Int, now: Date) {
        cancel(.backgroundGrace)
        // A suspension that has not begun is called off: a quick app switch keeps the connection.
        queue.removeAll { $0 == .suspend }
        request(.resume(operation: id), now: now)
    }

    private mutating func startSuspend(now: Date) {
        guard lifecycle == .foreground else { return finishOperation(now: now) }
        endOverlap()
        lifecycle = .suspended(since: now)
        stopUpstreams()
        refreshState(now: now)
        let token = nextToken()
        operation = .suspending(token: token)
        act(.disconnect(transport: active.id, token: token))
    }

    private mutating func startResume(operation id: Int, now: Date) {
        if case .suspended(let since) = lifecycle {
            lifecycle = .foreground
            // A stream not live since an earlier suspension keeps that earlier start.
            for upstream in Upstream.allCases where demand.contains(upstream) {
                resumeGaps[upstream] = min(resumeGaps[upstream] ?? since, since)
            }
        } else {
            // Not suspended: the connection was kept, but the platform may have frozen it meanwhile.
            act(.verifyConnection(transport: active.id))
        }
        act(.completeOperation(id))
        finishOperation(now: now)
    }

    // MARK: Timers

    private mutating func timerFired(_ timer: Timer, token: Int, now: Date) {
        if timer == .networkError {
            status.networkErrorLimitFired(token: token, &output) { "no live connection for \(settings.networkErrorAfter)" }
            return
        }
        guard timers[timer] == token else { return }
        timers[timer] = nil
        switch timer {
        case .backgroundGrace:
            request(.suspend, now: now)
        case .networkError:
            break  // the limit is the status's (above)
        case .switchTimeout:
            abandonSwitch(.connectionTimedOut(settings.switchTimeout))
        case .switchSettle:
            cutOver(now: now)
        case .overlapEnd:
            endOverlap()
        }
    }

    private mutating func arm(_ timer: Timer, after duration: Duration) {
        let token = nextToken()
        timers[timer] = token
        act(.armTimer(timer, token: token, after: duration))
    }

    private mutating func cancel(_ timer: Timer) {
        guard timers.removeValue(forKey: timer) != nil else { return }
        act(.cancelTimer(timer))
    }

    private mutating func nextToken() -> Int {
        serial += 1
        return serial
    }

    // MARK: The active transport's states → the public state, metrics, network errors (``ConnectionStatus``)

    private mutating func followStates() { status.follow(active.id, &output) }

    private mutating func stopFollowingStates(now: Date) { status.stopFollowing(active, now: now, &output) }

    private mutating func transportStateChanged(
        _ state: ConnectionState, transport id: Int, lastFailure: String?, lostAt: Date?, now: Date
    ) {
        guard
            status.transportStateChanged(
                state, reportedBy: id, active: active, lastFailure: lastFailure, lostAt: lostAt, now: now, &output)
        else { return }
        if status.isTransportDown { markOldBroken() }
        interruptLiveRuns(now: now)
        refreshState(now: now)
    }

    /// While the active transport's link is down, its live runs may miss events from when it was lost (else from when
    /// that was reported); the earliest loss stands.
    private mutating func interruptLiveRuns(now: Date) {
        guard status.isTransportDown else { return }
        let since = status.lostAt ?? now
        for upstream in Upstream.allCases {
            guard let run = runs[upstream], run.live else { continue }
            runs[upstream]?.interruptedSince = min(run.interruptedSince ?? since, since)
        }
    }

    /// The window `run` owes if it ends now: from its link's loss, if it was live then and has not been since.
    private mutating func oweOutage(of run: Run) {
        if let since = run.interruptedSince { oweResumeGap(of: run.id.upstream, since: since) }
    }

    /// Recomputes the public state and arms or disarms the network-error limit.
    private mutating func refreshState(now: Date) {
        let context = ConnectionStatus.Context(
            isForeground: lifecycle == .foreground, allowsRuns: session.allowsRuns, upstreamsRunning: !runs.isEmpty)
        if status.refresh(context, &output) {
            status.armNetworkErrorLimit(token: nextToken(), after: settings.networkErrorAfter, &output)
        }
    }

    private mutating func reportNetworkError(_ detail: String) { status.reportNetworkError(detail, &output) }

    // MARK: Switching transports (make-before-break)

    private mutating func startSwitch(
        to target: TransportRef, reason: TransportSwitchReason, onlyFromOtherDialect: Bool, operation id: Int, now: Date
    ) {
        if onlyFromOtherDialect && target.dialect == active.dialect {
            act(.forgetTransport(target.id))
            act(.completeOperation(id))
            return finishOperation(now: now)
        }
        endOverlap()
        serial += 1
        var change = TransportSwitch(
            operation: id, id: serial, target: target, reason: reason, startedAt: now, oldTransportDown: status.isTransportDown,
            oldDownSince: status.isTransportDown ? status.lostAt : nil)
        if lifecycle == .foreground, session.allowsRuns {
            for upstream in Upstream.allCases where demand.contains(upstream) {
                let old = runs[upstream]
                // The old run records what it delivers from now on, before the new one can receive anything.
                act(.beginOverlap(switch: change.id, upstream: upstream, old: old?.id, from: active, to: target))
                let run = newRun(upstream, on: target)
                change.prepare(run, replacing: old)
                act(.startUpstream(RunStart(run: run.id, transport: target, identity: identity, delivery: .held(switch: change.id))))
            }
        }
        operation = .switching(change)
        if change.prepared.isEmpty {
            cutOver(now: now)
        } else {
            arm(.switchTimeout, after: settings.switchTimeout)
        }
    }

    /// The old transport may have missed events during the overlap (it was not live, or a run of it ended).
    private mutating func markOldBroken() { updateSwitch { $0.oldBroke() } }

    /// Applies `body` to the switch in progress; `nil` when there is none.
    @discardableResult
    private mutating func updateSwitch<Result>(_ body: (inout TransportSwitch) -> Result?) -> Result? {
        guard case .switching(var change) = operation else { return nil }
        defer { operation = .switching(change) }
        return body(&change)
    }

    /// Does what a change to the switch's new runs leaves to do.
    private mutating func proceed(_ progress: TransportSwitch.Progress, now: Date) {
        switch progress {
        case .waiting: break
        case .allLive: settle()
        case .nothingPrepared: cutOver(now: now)
        }
    }

    /// Every new subscription is live: the old transport goes on delivering for `switchSettle`, for events published
    /// just before the new subscriptions were registered that are still on their way over the old link (the two links'
    /// latencies differ); the new runs go on holding. No blind window: it only makes the switch take longer.
    private mutating func settle() {
        cancel(.switchTimeout)
        arm(.switchSettle, after: settings.switchSettle)
    }

    /// The old runs stop and the new ones deliver, in one step.
    private mutating func cutOver(now: Date) {
        guard case .switching(var change) = operation, change.isPreparing else { return }
        cancel(.switchTimeout)
        cancel(.switchSettle)
        act(.cutOver(switch: change.id))
        stopUpstreams()
        runs = change.prepared
        // The new runs went live inside the switch: the windows their streams owe (since a suspension, a failure, or the
        // outage an old run had not resumed from) are reported now, on the new transport.
        for upstream in Upstream.allCases where runs[upstream]?.live == true {
            _ = reportResumeGap(of: upstream, on: change.target, now: now)
        }
        let old = active
        stopFollowingStates(now: now)
        active = change.target
        act(.activate(change.target))
        status.startEpisode()
        if !runs.isEmpty { followStates() }
        refreshState(now: now)
        if !change.prepared.isEmpty {
            overlapSwitch = change.id
            arm(.overlapEnd, after: settings.validLossMargin)
        }
        let token = nextToken()
        change.release(old, token: token, cutOverAt: now)
        operation = .switching(change)
        act(.disconnect(transport: old.id, token: token))
    }

    /// The old transport is disconnected: report the switch.
    private mutating func switched(_ change: TransportSwitch, from old: TransportRef, cutOverAt: Date, now: Date) {
        let gap = change.gap(cutOverAt: cutOverAt, now: now, safetyMargin: settings.validLossMargin.timeInterval)
        act(.metric(.transportSwitch(from: old.name, to: change.target.name)))
        log(.info, "switched transport", ["from": old.name, "to": change.target.name, "gap": "\(gap)"])
        emit(.transportSwitched(from: old.name, to: change.target.name, gap: gap, reason: change.reason))
        act(.forgetTransport(old.id))
        act(.completeOperation(change.operation))
        finishOperation(now: now)
    }

    /// The new transport did not get live (timeout, a subscription failed, the session ended): the old one stays.
    private mutating func abandonSwitch(_ error: RealtimeError) {
        guard case .switching(var change) = operation, change.isPreparing else { return }
        cancel(.switchTimeout)
        cancel(.switchSettle)
        let token = nextToken()
        for run in change.abandon(token: token, error: error) { act(.stopUpstream(run)) }
        operation = .switching(change)
        act(.endOverlap(switch: change.id))
        log(.warning, "transport switch abandoned", ["to": change.target.name, "error": "\(error)"])
        act(.disconnect(transport: change.target.id, token: token))
    }

    /// Ends the de-duplication of the last switch's overlap, if it still runs.
    private mutating func endOverlap() {
        guard let overlap = overlapSwitch else { return }
        overlapSwitch = nil
        cancel(.overlapEnd)
        act(.endOverlap(switch: overlap))
    }

    // MARK: Shutdown

    private mutating func shutdown() {
        lifecycle = .shutDown
        cancel(.backgroundGrace)
        status.disarmNetworkErrorLimit(&output)
        for timer in [Timer.switchTimeout, .switchSettle, .overlapEnd] { cancel(timer) }
        if let overlap = overlapSwitch { act(.endOverlap(switch: overlap)) }
        overlapSwitch = nil
        stopUpstreams()
        status.forgetFollowing(&output)
        switch operation {
        case .none, .suspending:
            break
        case .updating(let id, _, _):
            act(.completeOperation(id))
        case .switching(let change):
            for run in change.preparedRunIDs { act(.stopUpstream(run)) }
            if case .releasing(let old, _, _) = change.stage {
                act(.disconnect(transport: old.id, token: nextToken()))
                act(.completeOperation(change.operation))
            } else {
                act(.disconnect(transport: change.target.id, token: nextToken()))
                act(.failOperation(change.operation, .disconnected))
            }
        }
        operation = .none
        for queued in queue { answerAfterShutdown(queued) }
        queue.removeAll()
        act(.disconnect(transport: active.id, token: nextToken()))
        status.goOffline(&output)
    }

    // MARK: Output

    mutating func act(_ action: Action) { output.append(action) }

    mutating func emit(_ event: NotifierConnectionEvent) { act(.emit(event)) }

    private mutating func log(_ level: Logger.Level, _ message: String, _ metadata: [String: String]) {
        act(.log(LogEntry(level: level, message: message, metadata: metadata)))
    }
}
