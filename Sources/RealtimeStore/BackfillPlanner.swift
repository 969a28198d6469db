import Foundation
import SubscriberCore

/// When to call the app's backfill for one kind, as a pure state machine: the windows reported for the kind, the one
/// call in flight, and retries with backoff. The shell (``RealtimeStore``'s feed) performs its actions and feeds back
/// what happened.
///
/// - A call started at `t` with `since: s` returns what changed in `[s, t]`: a window reported while it runs is
///   covered when it lies inside that span; otherwise what lies after `t` is kept for the next call. Windows kept meanwhile merge
///   into one: the next call starts at the earliest of them.
/// - One call at a time. A failure is reported and retried after the policy's delay, from the earliest instant still
///   missing; the kind stays stale until a call succeeds with nothing left to fetch.
/// - ``Event/reset(now:)`` (start, or another identity) forgets everything: a call still in flight is void, and
///   everything is missing (`since` is `Date.distantPast`: the app returns the whole current state).
/// - ``Event/interrupted(since:)`` holds calls until a window that releases them (the stream's own `live` or
///   `resumed`): a window that does not (a switch while no stream runs) only widens what is missing.
/// - A call the shell could not make (no backfill registered yet) is fed back as ``Event/callSkipped(id:)``: what it
///   would have fetched stays missing, and ``Event/fetchRegistered(now:)`` makes it later.
struct BackfillPlanner: Sendable, Equatable {
    enum Event: Equatable, Sendable {
        /// Start, or a new identity: everything may be missing.
        case reset(now: Date)
        /// Events may be being missed from `since` on (the session expired, the user signed out, another identity is
        /// being signed in): the kind is stale, but no call is made until a window is reported.
        case interrupted(since: Date)
        /// Events inside `window` may have been missed. `releasing`: the kind's stream is live again (its own `live` or
        /// `resumed`, or a cut-over that restarted it), so an interruption no longer holds calls; otherwise the window
        /// only widens what is missing.
        case windowOpened(GapWindow, releasing: Bool = true)
        case callSucceeded(id: Int, now: Date)
        case callFailed(id: Int, error: String)
        case retryDue(id: Int, now: Date)
        /// The call `id` was not made (no backfill registered): what it would have fetched is still missing.
        case callSkipped(id: Int)
        /// A backfill was registered: a call that is due is made now.
        case fetchRegistered(now: Date)
    }

    enum Action: Equatable, Sendable {
        /// Call the backfill for what changed since `since`; report back with `id`.
        case call(id: Int, since: Date)
        /// Feed ``Event/retryDue(id:now:)`` after `delay`.
        case scheduleRetry(id: Int, after: Duration)
        /// The kind became stale (`true`) or current (`false`).
        case stale(Bool)
        /// Tell the app that attempt `attempt` failed (it is retried).
        case reportFailure(attempt: Int, error: String)
    }

    private struct Call: Equatable, Sendable {
        let id: Int
        let since: Date
        let startedAt: Date
    }

    let policy: BackfillPolicy
    /// The earliest instant not yet covered by a call that started (nil: nothing kept).
    private var missingSince: Date?
    private var inFlight: Call?
    /// A failed call's id while its retry is scheduled.
    private var retryID: Int?
    private var failures = 0
    /// Interrupted and not yet reopened: calls wait.
    private var held = false
    private var nextID = 0
    private(set) var isStale = false

    init(policy: BackfillPolicy) {
        self.policy = policy
    }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .reset(let now):
            inFlight = nil
            retryID = nil
            failures = 0
            held = false
            missingSince = .distantPast
            return becomeStale() + start(now: now)
        case .interrupted(let since):
            held = true
            missingSince = min(missingSince ?? since, since)
            return becomeStale()
        case .windowOpened(let window, let releasing):
            if releasing { held = false }
            var from = window.start
            if let call = inFlight, window.start >= call.since {
                if window.end <= call.startedAt { return [] }
                from = max(from, call.startedAt)  // the running call returns the rest
            }
            missingSince = min(missingSince ?? from, from)
            return becomeStale() + (inFlight == nil && retryID == nil ? start(now: window.end) : [])
        case .callSucceeded(let id, let now):
            guard inFlight?.id == id else { return [] }
            inFlight = nil
            failures = 0
            if missingSince != nil { return start(now: now) }
            guard isStale else { return [] }
            isStale = false
            return [.stale(false)]
        case .callFailed(let id, let error):
            guard let call = inFlight, call.id == id else { return [] }
            inFlight = nil
            failures += 1
            missingSince = min(missingSince ?? call.since, call.since)
            retryID = id
            return [.reportFailure(attempt: failures, error: error), .scheduleRetry(id: id, after: policy.delay(beforeRetry: failures))]
        case .retryDue(let id, let now):
            guard retryID == id else { return [] }
            retryID = nil
            return start(now: now)
        case .callSkipped(let id):
            guard let call = inFlight, call.id == id else { return [] }
            inFlight = nil
            missingSince = min(missingSince ?? call.since, call.since)
            return []
        case .fetchRegistered(let now):
            return retryID == nil ? start(now: now) : []
        }
    }

    /// Whether the call `id` is the one in flight (a reset makes a running call void: its answer is not applied).
    func isCalling(_ id: Int) -> Bool { inFlight?.id == id }

    private mutating func becomeStale() -> [Action] {
        guard !isStale else { return [] }
        isStale = true
        return [.stale(true)]
    }

    private mutating func start(now: Date) -> [Action] {
        guard inFlight == nil, !held, let since = missingSince else { return [] }
        nextID += 1
        inFlight = Call(id: nextID, since: since, startedAt: now)
        missingSince = nil
        return [.call(id: nextID, since: since)]
    }
}
