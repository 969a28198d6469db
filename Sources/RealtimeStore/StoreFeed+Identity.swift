import BackendNotifier
import Foundation
import SubscriberCore

// Identity: a change of user moves the store to a new generation, and a notifier shut down ends the feed for good.
extension StoreFeed {
    /// Another identity is being signed in: the generation changes at once (a batch of the previous one that has not
    /// reached the main actor yet is dropped there), the state empties, every kind is stale, and the streams stop. The
    /// returned signal fires once their observers have left, so no event of the previous identity is read afterwards.
    func beginIdentityChange() -> OneShotSignal<Void>? {
        let now = wallClock.now()
        let (jobs, stopped) = state.withLock { state -> ([Job], OneShotSignal<Void>?) in
            state.generation += 1
            // A run (re)started from now until the change ends fetches nothing: the notifier has neither identity.
            state.changingIdentity = true
            state.changing.fire()
            defer { state.readersStopped = nil }
            state.ready = OneShotSignal()
            state.changing = OneShotSignal()
            state.ledger = StoreLedger()
            state.delivered = DeliveredEvents()
            state.interruptedStreams = [:]
            // Nothing runs until the notifier has the new identity: a switch meanwhile restarts nothing.
            state.heldStreams = Dictionary(uniqueKeysWithValues: NotifierUpstream.allCases.map { ($0.rawValue, .stopped) })
            state.failure = nil
            state.changed.formUnion(.all)
            return (Self.kinds.flatMap { handle($0, .interrupted(since: now), &state) }, state.readersStopped)
        }
        start(jobs)
        return stopped
    }

    /// Whether `batch` was drained in the current generation (the store drops it otherwise).
    func isCurrent(_ batch: StoreBatch) -> Bool { state.withLock { $0.generation == batch.generation } }

    /// The notifier has the new identity: its streams are read again, and every kind is backfilled from the start.
    /// Signed out (`signedIn` false), nothing is fetched: every kind stays stale until someone signs in (a backfill
    /// without an identity could only fail, and be retried for as long as nobody signs in).
    func endIdentityChange(signedIn: Bool) {
        state.withLock { state in
            state.signedIn = signedIn
            state.changingIdentity = false
            return state.ready
        }.fire()
        startGeneration()
    }

    /// Loads everything (`since` = `Date.distantPast`) now, and again from now once each stream is live: what is
    /// published between the first load and the subscription's confirmation reaches the store neither way otherwise.
    /// (A stream that was already live, through another observer, delivers from the moment the store observes it.)
    /// Nothing is fetched signed out, while an identity change is under way (its end starts the new identity's
    /// generation: a call made before would be for neither identity), or once the notifier has shut down.
    func startGeneration() {
        let now = wallClock.now()
        start(
            state.withLock { state in
                guard state.signedIn, !state.changingIdentity, !state.notifierEnded else { return [] }
                for upstream in NotifierUpstream.allCases { state.interruptedStreams[upstream.rawValue] = now }
                state.heldStreams = [:]
                return Self.kinds.flatMap { handle($0, .reset(now: now), &state) }
            })
    }

    /// The notifier ended its streams (it was shut down, for good): nothing feeds the store any more, so every kind is
    /// stale from now and held (as when a run ends with no successor), and nothing is fetched again.
    func notifierShutDown() {
        let now = wallClock.now()
        start(
            state.withLock { state in
                guard !state.notifierEnded else { return [] }
                state.notifierEnded = true
                for upstream in NotifierUpstream.allCases {
                    state.interruptedStreams[upstream.rawValue] = min(state.interruptedStreams[upstream.rawValue] ?? now, now)
                    state.heldStreams[upstream.rawValue] = .stopped
                }
                return Self.kinds.flatMap { handle($0, .interrupted(since: now), &state) }
            })
    }
}
