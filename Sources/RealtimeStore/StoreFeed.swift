import BackendNotifier
import Foundation
import SubscriberCore

/// The store's I/O shell off the main actor: it applies what the notifier delivers and what backfills return to a
/// ``StoreLedger`` under one lock (no hop per event), drives one ``BackfillPlanner`` per kind, and hands the result to
/// the main actor in batches. Everything it runs lives in ``run(notifier:store:)``'s task group.
final class StoreFeed: Sendable {
    typealias Fetch = @Sendable (Date) async throws -> [VortexEvent]
    typealias Job = @Sendable () async -> Void

    /// The kinds the store follows and backfills.
    static let kinds = VortexEventKind.allCases
    /// The kinds it holds (archive events are history, not state), stale until loaded.
    static let stateKinds = kinds.filter { $0 != .archiveState }

    /// One reader of ``RealtimeStore/values(_:)``.
    struct ValueReader: Sendable {
        enum Queued { case queued, full, gone }
        /// Queues a delivered event without waking the consumer (called under the feed's lock, in delivery order).
        let enqueue: @Sendable (VortexEvent, StoreOrigin) -> Queued
        /// Wakes the consumer (after the lock is released).
        let signal: @Sendable () -> Void
        /// Ends the stream after what it queued: the reader fell behind.
        let fellBehind: @Sendable () -> Void
    }

    /// Why a stream's kinds are held (no call until the stream is live again).
    enum Hold {
        /// Nothing restarts the stream but the app (the session ended, the user signed out, no run reads it): a
        /// transport switch does not either.
        case stopped
        /// The stream failed on its own: a switch's cut-over restarts it (it prepares every observed stream).
        case failed
    }

    struct State {
        var ledger = StoreLedger()
        var delivered = DeliveredEvents()
        var readers: [VortexEventKind: [Int: ValueReader]] = [:]
        var nextReader = 0
        var planners: [VortexEventKind: BackfillPlanner]
        var fetches: [VortexEventKind: Fetch] = [:]
        /// Bumped by every identity change: what an older generation read or fetched is dropped.
        var generation = 0
        /// Whether the current generation's streams may be read (false while the notifier changes identity).
        var ready: OneShotSignal<Void> = OneShotSignal()
        var changing: OneShotSignal<Void> = OneShotSignal()
        /// Fired when the current generation's readers have stopped (their streams ended, their observers left).
        var readersStopped: OneShotSignal<Void>?
        /// Streams not yet live since a load (or since the session expired or the user signed out), and since when: their
        /// first `live` or `resumed` opens a window from there.
        var interruptedStreams: [String: Date] = [:]
        var changedEntities: Set<StoreLedger.Entity> = []
        var changed: StoreBatch.Parts = []
        var stale: Set<VortexEventKind> = []
        var statistics = StoreStatistics()
        var failure: BackfillFailure?
        /// Failures not yet handed to the readers of ``backfillFailures()`` (handed after the lock is released).
        var failureReports: [BackfillFailure] = []
        var failureReaders: [Int: AsyncStream<BackfillFailure>.Continuation] = [:]
        /// The run feeding the store, if any.
        var run: RunSlot?
        var nextRun = 0
        /// The readers of the last run that ended with no successor (the next run's readers wait for them to leave).
        var endedRunReaders: OneShotSignal<Void>?
        /// Whether someone is signed in (the notifier's user when the store was made, then as the store changed the
        /// identity): signed out, nothing is fetched.
        var signedIn = true
        /// Whether an identity change is under way (between ``beginIdentityChange()`` and ``endIdentityChange(signedIn:)``):
        /// nothing is fetched until it ends, and then only for the new identity (a run restarted meanwhile waits).
        var changingIdentity = false
        /// Whether the notifier was shut down (its streams ended): nothing feeds the store any more, for good, so every
        /// kind stays stale and nothing is fetched.
        var notifierEnded = false
        /// The streams whose kinds are held, and why.
        var heldStreams: [String: Hold] = [:]
        var jobs: AsyncStream<Job>.Continuation? { run?.jobs }
        var wake: AsyncStream<Void>.Continuation? { run?.wake }
    }

    // Not private: the run's takeover and end, the backfill call and the connection events are extensions in files
    // of their own.
    let state: Locked<State>
    private let configuration: StoreConfiguration
    let clock: any Clock<Duration>
    let wallClock: WallClock

    init(configuration: StoreConfiguration, clock: any Clock<Duration>, wallClock: WallClock, signedIn: Bool) {
        let planners = Dictionary(uniqueKeysWithValues: Self.kinds.map { ($0, BackfillPlanner(policy: configuration.backfillPolicy)) })
        var initial = State(planners: planners)
        initial.signedIn = signedIn
        initial.ready.fire()
        state = Locked(initial)
        self.configuration = configuration
        self.clock = clock
        self.wallClock = wallClock
    }

    /// Registers (or replaces) `kind`'s backfill. A call that was due without one is made now, and a kind whose
    /// windows were not counted for want of a backfill (archives) is marked stale.
    func register(_ kind: VortexEventKind, _ fetch: @escaping Fetch) {
        let now = wallClock.now()
        start(
            state.withLock { state in
                state.fetches[kind] = fetch
                if state.planners[kind]?.isStale == true, state.stale.insert(kind).inserted { state.changed.insert(.stale) }
                return handle(kind, .fetchRegistered(now: now), &state)
            })
    }

    // MARK: Running

    /// Feeds the store until the calling task is cancelled, or until a newer call takes over: the newest run feeds the
    /// store (a view's `.task` restarted before the previous run has wound down), the previous one is told to stop, and
    /// the new one reads the streams once the previous one's readers have left. A run that ends with no successor marks
    /// every kind stale (nothing keeps them current any more) and hands that to the main actor.
    func run(notifier: BackendNotifier, store: RealtimeStore) async {
        // Unbounded, yet small: each kind's planner has at most one call in flight or one retry waiting.
        let (jobs, jobsContinuation) = AsyncStream<Job>.makeStream()
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let readersEnded = OneShotSignal<Void>()
        let (id, previous, previousReaders) = takeOver(jobs: jobsContinuation, wake: wake, readersEnded: readersEnded)
        // Its loop ends, and its tasks are cancelled; what it had not flushed yet, this run flushes.
        previous?.jobs.finish()
        if state.withLock({ !$0.changed.isEmpty }) { wake.yield() }
        await withDiscardingTaskGroup { group in
            group.addTask {
                defer { readersEnded.fire() }
                // One reader per stream: the previous run's leave first (the streams restart, and report `live`).
                if let previousReaders, await previousReaders.wait() == nil { return }
                await self.readStreams(notifier)
            }
            group.addTask { await self.flush(wakes, to: store) }
            // Signed out, nothing is fetched (the kinds stay held until someone signs in); during an identity change,
            // nothing until it ends (its end loads the new identity).
            startGeneration()
            for await job in jobs { group.addTask(operation: job) }
            group.cancelAll()
            await end(id, store: store)
        }
    }

    /// Reads the notifier's streams, generation after generation: each identity change stops the readers and starts
    /// new ones once the notifier has the new identity (a stream observed after that delivers only its events).
    private func readStreams(_ notifier: BackendNotifier) async {
        while !Task.isCancelled {
            let (generation, ready, changing) = state.withLock { ($0.generation, $0.ready, $0.changing) }
            guard await ready.wait() != nil else { return }
            let stopped = OneShotSignal<Void>()
            state.withLock { $0.readersStopped = stopped }
            defer { stopped.fire() }
            // Only an identity change (or cancellation) ends a generation: streams that end (the notifier was shut down)
            // leave nothing to read, and are not observed again in a loop; they mark every kind stale.
            // Observed before the value streams start their upstreams, so no `live` of theirs is missed.
            let connectionEvents = await notifier.connectionEvents()
            await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    _ = await changing.wait()
                    return true
                }
                group.addTask {
                    for await event in connectionEvents { self.connectionEvent(event, generation: generation) }
                    // Not cancelled: the notifier ended the stream (it ends them only when it shuts down).
                    if !Task.isCancelled { self.notifierShutDown() }
                    return false
                }
                func read<Output: Sendable>(_ stream: AsyncStream<Output>, _ wrap: @escaping @Sendable (Output) -> VortexEvent) {
                    group.addTask {
                        for await value in stream { self.apply([wrap(value)], origin: .live, generation: generation) }
                        if !Task.isCancelled { self.notifierShutDown() }
                        return false
                    }
                }
                read(await notifier.devicePresenceValues(), VortexEvent.devicePresence)
                read(await notifier.deviceRecordingValues(), VortexEvent.deviceRecording)
                read(await notifier.deviceFirmwareValues(), VortexEvent.deviceFirmware)
                read(await notifier.licenseValues(), VortexEvent.licensePhase)
                read(await notifier.planValues(), VortexEvent.plan)
                read(await notifier.aiSettingsValues(), VortexEvent.aiSettings)
                read(await notifier.roleValues(), VortexEvent.roleChanged)
                read(await notifier.revokeValues(), VortexEvent.tokenRevoked)
                read(await notifier.archiveValues(), VortexEvent.archiveState)
                while let changed = await group.next(), !changed {}
                group.cancelAll()
            }
        }
    }

    /// Hands what changed to the main actor: at most one hop per flush interval, and none while nothing changed.
    private func flush(_ wakes: AsyncStream<Void>, to store: RealtimeStore) async {
        for await _ in wakes {
            if configuration.flushInterval > .zero {
                do { try await clock.sleep(for: configuration.flushInterval, tolerance: nil) } catch { return }
            }
            guard let batch = drain() else { continue }
            await store.apply(batch)
        }
    }

    func drain() -> StoreBatch? {
        state.withLock { state in
            guard !state.changed.isEmpty else { return nil }
            state.statistics.flushes += 1
            defer {
                state.changed = []
                state.changedEntities = []
            }
            return StoreBatch(
                generation: state.generation, snapshot: state.ledger.snapshot, changed: state.changed, stale: state.stale,
                statistics: state.statistics, failure: state.failure)
        }
    }

    // MARK: Events

    /// Applies events of the current generation (`origin` live or backfill), and delivers to the value streams what
    /// is new: for the state kinds what the ledger applied, for the event kinds what was not delivered before.
    /// `callStart`: for a backfill, the ledger's sequence when its call started (see ``StoreLedger``). `call`: for a
    /// backfill, the kind and id of its call: its answer is dropped unless the call is still the one the kind's planner
    /// waits for (a reset, such as the new identity's load, made it void: it may have fetched for another identity).
    func apply(
        _ events: [VortexEvent], origin: StoreOrigin, generation: Int, callStart: Int? = nil,
        call: (kind: VortexEventKind, id: Int)? = nil
    ) {
        let (wake, woken, behind) = state.withLock { state -> (AsyncStream<Void>.Continuation?, [ValueReader], [ValueReader]) in
            guard state.generation == generation else { return (nil, [], []) }
            if let call, state.planners[call.kind]?.isCalling(call.id) != true { return (nil, [], []) }
            let wasClean = state.changed.isEmpty
            var woken: [Int: ValueReader] = [:]
            var behind: [ValueReader] = []
            for event in events {
                let outcome = state.ledger.apply(event, origin: origin, callStart: callStart)
                switch outcome {
                case .applied(let entity):
                    state.statistics.applied += 1
                    if !state.changedEntities.insert(entity).inserted { state.statistics.merged += 1 }
                    state.changed.formUnion(StoreBatch.Parts(holding: entity.kind))
                case .older:
                    state.statistics.older += 1
                    state.changed.insert(.statistics)
                case .duplicate:
                    state.statistics.duplicates += 1
                    state.changed.insert(.statistics)
                case .notKept: break
                }
                let isNew: Bool
                if let identity = DeliveredEvents.Identity(event) {
                    // A live event that says no instant is delivered each time: two such events may be distinct.
                    isNew = state.delivered.firstDelivery(identity) || (origin == .live && !identity.hasInstant)
                    // An archive event has no ledger entry: a repeat is counted here.
                    if !isNew, outcome == .notKept {
                        state.statistics.duplicates += 1
                        state.changed.insert(.statistics)
                    }
                } else {
                    if case .applied = outcome { isNew = true } else { isNew = false }
                }
                guard isNew, let readers = state.readers[event.kind] else { continue }
                for (id, reader) in readers {
                    switch reader.enqueue(event, origin) {
                    case .queued: woken[id] = reader
                    case .full:
                        state.readers[event.kind]?[id] = nil
                        woken[id] = nil
                        behind.append(reader)
                    case .gone:
                        state.readers[event.kind]?[id] = nil
                        woken[id] = nil
                    }
                }
            }
            return (wasClean && !state.changed.isEmpty ? state.wake : nil, Array(woken.values), behind)
        }
        // Woken and ended after the lock: resuming a consumer takes its task's lock.
        for reader in woken { reader.signal() }
        for reader in behind { reader.fellBehind() }
        wake?.yield()
    }

    /// A stream of the values of `kind` the store takes from now on, live or backfilled, each once, in the order taken.
    func values<Output: VortexEventPayload>(
        _ kind: VortexEventKind, as _: Output.Type
    ) -> AsyncThrowingStream<StoreValue<Output>, any Error> {
        let limit = configuration.valueBufferLimit
        let buffer = StreamBuffer<StoreValue<Output>>(limit: limit)
        let reader = ValueReader(
            enqueue: { event, origin in
                guard let payload = event.payload as? Output else { return .queued }
                switch buffer.enqueue(StoreValue(payload: payload, instant: payload.date, origin: origin)) {
                case .enqueued: return .queued
                case .dropped: return .full
                case .terminated: return .gone
                }
            },
            signal: { buffer.signal() },
            fellBehind: { buffer.finish(throwing: RealtimeStoreError.readerFellBehind(kind: kind, limit: limit)) })
        let id = state.withLock { state in
            defer { state.nextReader += 1 }
            state.readers[kind, default: [:]][state.nextReader] = reader
            return state.nextReader
        }
        // A reader that leaves is forgotten at once, not at the next value of its kind (which may never come).
        buffer.onConsumerGone { [state] in state.withLock { _ = $0.readers[kind]?.removeValue(forKey: id) } }
        return buffer.makeThrowingStream()
    }

    // MARK: Backfill

    /// Feeds what a job of generation `generation` learnt: dropped once another identity was signed in (or out).
    private func handle(_ kind: VortexEventKind, _ event: BackfillPlanner.Event, generation: Int) {
        start(
            state.withLock { state in
                guard state.generation == generation else { return [] }
                return handle(kind, event, &state)
            })
    }

    /// Feeds the kind's planner under the lock; returns the jobs its actions need (started once the lock is released).
    func handle(_ kind: VortexEventKind, _ event: BackfillPlanner.Event, _ state: inout State) -> [Job] {
        guard let actions = state.planners[kind]?.handle(event) else { return [] }
        let generation = state.generation
        var jobs: [Job] = []
        for action in actions {
            switch action {
            case .stale(let stale):
                // Archives are not state: their windows count only once the app has asked for them to be healed.
                if stale, kind == .archiveState, state.fetches[kind] == nil { continue }
                if stale { state.stale.insert(kind) } else { state.stale.remove(kind) }
                state.changed.insert(.stale)
            case .reportFailure(let attempt, let error):
                state.statistics.backfillFailures += 1
                let failure = BackfillFailure(kind: kind, attempt: attempt, message: error)
                state.failure = failure
                state.failureReports.append(failure)
                state.changed.insert(.failure)
            case .call(let id, let since):
                // Without a registered backfill the call is not made: the kind stays stale until one is registered
                // (``register(_:_:)`` makes the call then).
                guard let fetch = state.fetches[kind] else {
                    jobs += handle(kind, .callSkipped(id: id), &state)
                    continue
                }
                let callStart = state.ledger.sequence
                let timeout = configuration.backfillPolicy.effectiveCallTimeout
                jobs.append { [self] in
                    switch await call(fetch, since: since, timeout: timeout) {
                    case .success(let events):
                        apply(events, origin: .backfill, generation: generation, callStart: callStart, call: (kind, id))
                        handle(kind, .callSucceeded(id: id, now: wallClock.now()), generation: generation)
                    case .failure(let error):
                        handle(kind, .callFailed(id: id, error: error), generation: generation)
                    case .cancelled:
                        return  // the run ended
                    }
                }
            case .scheduleRetry(let id, let delay):
                jobs.append { [self] in
                    do { try await clock.sleepReleasingOnCancel(for: delay) } catch { return }
                    handle(kind, .retryDue(id: id, now: wallClock.now()), generation: generation)
                }
            }
        }
        return jobs
    }

    func start(_ jobs: [Job]) {
        let (continuation, wake, failures, readers) = state.withLock { state in
            defer { state.failureReports = [] }
            let readers = state.failureReports.isEmpty ? [] : Array(state.failureReaders.values)
            return (state.jobs, state.changed.isEmpty ? nil : state.wake, state.failureReports, readers)
        }
        for job in jobs { continuation?.yield(job) }
        for failure in failures { for reader in readers { reader.yield(failure) } }
        wake?.yield()
    }

    /// How many readers of ``values(_:as:)`` are registered.
    var valueReaderCount: Int { state.withLock { $0.readers.values.reduce(0) { $0 + $1.count } } }

    /// Every backfill failure from now on, as it happens.
    func backfillFailures() -> AsyncStream<BackfillFailure> {
        let (stream, continuation) = AsyncStream<BackfillFailure>.makeStream(bufferingPolicy: .bufferingNewest(100))
        let id = state.withLock { state in
            defer { state.nextReader += 1 }
            state.failureReaders[state.nextReader] = continuation
            return state.nextReader
        }
        continuation.onTermination = { [state] _ in state.withLock { $0.failureReaders[id] = nil } }
        return stream
    }
}
