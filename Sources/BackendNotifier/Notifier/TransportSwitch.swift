import Foundation
import SubscriberCore

/// A make-before-break transport switch inside ``NotifierStateMachine``, a pure state machine of its own: its new
/// runs, how far it got, and whether the old transport stayed intact through the overlap (which decides the window
/// it reports).
///
/// The notifier asks it what a run's report or an observer leaving means for the switch (``Progress``), and performs
/// the rest itself: timers, the old runs, the cut-over and the disconnects. Tokens stay the notifier's.
struct TransportSwitch: Equatable, Sendable {
    typealias Run = NotifierStateMachine.Run
    typealias RunID = NotifierStateMachine.RunID
    typealias TransportRef = NotifierStateMachine.TransportRef

    enum Stage: Equatable, Sendable {
        /// The new runs subscribe while the old ones deliver; `waiting` are not live yet.
        case preparing(waiting: Set<Upstream>)
        /// Cut over; the old transport is being disconnected.
        case releasing(old: TransportRef, token: Int, cutOverAt: Date)
        /// Given up; the new transport is being disconnected.
        case abandoning(token: Int, error: RealtimeError)
    }

    /// What a change to the new runs leaves the notifier to do.
    enum Progress: Equatable, Sendable {
        /// Some new run is not live yet: wait.
        case waiting
        /// Every new run is live: settle, then cut over.
        case allLive
        /// No new run is left: cut over now.
        case nothingPrepared
    }

    /// The public operation that completes when the switch does.
    let operation: Int
    let id: Int
    let target: TransportRef
    let reason: TransportSwitchReason
    let startedAt: Date
    /// The new runs.
    private(set) var prepared: [Upstream: Run] = [:]
    /// Whether the old transport stayed live for every upstream through the overlap (then nothing can be missing).
    private(set) var oldIntact: Bool
    /// When the old transport's outage began, if it was down when the switch began (its runs are cut over before it
    /// could report that outage's gap).
    let oldDownSince: Date?
    private(set) var stage: Stage = .preparing(waiting: [])

    /// A switch that begins preparing at `startedAt`; an old transport that is down already (since `oldDownSince`, when
    /// known) may have missed events.
    init(
        operation: Int, id: Int, target: TransportRef, reason: TransportSwitchReason, startedAt: Date, oldTransportDown: Bool,
        oldDownSince: Date? = nil
    ) {
        self.operation = operation
        self.id = id
        self.target = target
        self.reason = reason
        self.startedAt = startedAt
        self.oldIntact = !oldTransportDown
        self.oldDownSince = oldTransportDown ? oldDownSince : nil
    }

    var isPreparing: Bool { if case .preparing = stage { true } else { false } }

    /// Whether `run` is one of the new runs, while preparing.
    func isPrepared(_ run: RunID) -> Bool { isPreparing && prepared[run.upstream]?.id == run }

    /// The new runs, in upstream order (so the actions that stop them come in a stable order).
    var preparedRunIDs: [RunID] { Upstream.allCases.compactMap { prepared[$0]?.id } }

    /// `run` will take over from `old` (`nil`: the upstream had no run). An old run that is not live may have missed
    /// events already.
    mutating func prepare(_ run: Run, replacing old: Run?) {
        guard case .preparing(var waiting) = stage else { return }
        if old?.live != true { oldIntact = false }
        prepared[run.id.upstream] = run
        waiting.insert(run.id.upstream)
        stage = .preparing(waiting: waiting)
    }

    /// The new run `run` is live; `nil` when it is not a new run still waiting.
    mutating func runLive(_ run: RunID) -> Progress? {
        guard isPrepared(run), case .preparing(var waiting) = stage, waiting.remove(run.upstream) != nil else { return nil }
        prepared[run.upstream]?.live = true
        stage = .preparing(waiting: waiting)
        return waiting.isEmpty ? .allLive : .waiting
    }

    /// Nobody observes `upstream` any more: its new run (to stop) and what is left to do; `nil` when it has none.
    mutating func drop(_ upstream: Upstream) -> (run: RunID, progress: Progress)? {
        guard case .preparing(var waiting) = stage, let run = prepared.removeValue(forKey: upstream) else { return nil }
        let wasWaiting = waiting.remove(upstream) != nil
        stage = .preparing(waiting: waiting)
        if prepared.isEmpty { return (run.id, .nothingPrepared) }
        return (run.id, wasWaiting && waiting.isEmpty ? .allLive : .waiting)
    }

    /// An old run ended or the old transport went down while preparing: the old transport may have missed events.
    mutating func oldBroke() {
        if isPreparing { oldIntact = false }
    }

    /// Cut over at `cutOverAt`; the old transport is being disconnected with `token`.
    mutating func release(_ old: TransportRef, token: Int, cutOverAt: Date) {
        stage = .releasing(old: old, token: token, cutOverAt: cutOverAt)
    }

    /// Given up with `error`; the new transport is being disconnected with `token`. Returns the new runs, to stop.
    mutating func abandon(token: Int, error: RealtimeError) -> [RunID] {
        let runs = preparedRunIDs
        prepared.removeAll()
        stage = .abandoning(token: token, error: error)
        return runs
    }

    /// The window the switch reports. A requested switch over an intact old transport delivered everything: an empty
    /// window at the cut-over. Otherwise the transports' gap rule: from `safetyMargin` before the switch began, or
    /// before the old transport's outage began if it was down already (a failover comes a minute into one), to `now`,
    /// when it ended.
    func gap(cutOverAt: Date, now: Date, safetyMargin: TimeInterval) -> GapWindow {
        guard !(reason == .requested && oldIntact) else { return GapWindow(start: cutOverAt, end: cutOverAt) }
        let start = min(startedAt, oldDownSince ?? startedAt)
        return GapWindow(start: start.addingTimeInterval(-safetyMargin), end: now)
    }
}
