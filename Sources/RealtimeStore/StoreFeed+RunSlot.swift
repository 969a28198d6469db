import BackendNotifier
import SubscriberCore

extension StoreFeed {
    /// The run feeding the store: the newest call of ``run(notifier:store:)``.
    struct RunSlot {
        let id: Int
        let jobs: AsyncStream<Job>.Continuation
        let wake: AsyncStream<Void>.Continuation
        /// Fired once the run's readers of the notifier's streams have left (the next run's readers wait for it).
        let readersEnded: OneShotSignal<Void>
    }

    /// Makes a new run the one feeding the store. Returns its id, the run it takes over from (told to stop by its
    /// caller), and the readers its own readers wait for: the previous run's, or those of the last run that ended with
    /// no successor.
    func takeOver(
        jobs: AsyncStream<Job>.Continuation, wake: AsyncStream<Void>.Continuation, readersEnded: OneShotSignal<Void>
    ) -> (id: Int, previous: RunSlot?, previousReaders: OneShotSignal<Void>?) {
        state.withLock { state -> (Int, RunSlot?, OneShotSignal<Void>?) in
            state.nextRun += 1
            let previous = state.run
            let previousReaders = previous?.readersEnded ?? state.endedRunReaders
            state.run = RunSlot(id: state.nextRun, jobs: jobs, wake: wake, readersEnded: readersEnded)
            state.endedRunReaders = nil
            return (state.nextRun, previous, previousReaders)
        }
    }

    /// The run `id` stopped: if no newer run took over, every kind is stale from now (and held until a run starts
    /// again), and the main actor gets that at once (the run's flush has stopped).
    func end(_ id: Int, store: RealtimeStore) async {
        let now = wallClock.now()
        let ended = state.withLock { state -> Bool in
            guard let run = state.run, run.id == id else { return false }
            state.run = nil
            state.endedRunReaders = run.readersEnded
            for upstream in NotifierUpstream.allCases {
                state.interruptedStreams[upstream.rawValue] = min(state.interruptedStreams[upstream.rawValue] ?? now, now)
                state.heldStreams[upstream.rawValue] = .stopped
            }
            // No run: no call is made (the next run starts afresh).
            for kind in Self.kinds { _ = handle(kind, .interrupted(since: now), &state) }
            return true
        }
        guard ended, let batch = drain() else { return }
        await store.apply(batch)
    }
}
