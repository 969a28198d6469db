import BackendNotifier
import Foundation
import Observation
import SubscriberCore

/// The state an app's views read, kept true by the library: the current value per entity, fed by the notifier's
/// streams and healed by the app's backfills after every window in which events may have been missed.
///
/// ```swift
/// let store = RealtimeStore(notifier: stack.notifier)
/// store.backfill(.devicePresence) { since in try await api.presence(changedSince: since) }
/// // in a SwiftUI view: .task { await store.run() }, and read store.devices, store.isStale(.devicePresence)
/// ```
///
/// - Every value keeps the newest event of its entity by `timestamp` (``StoreValue``): nothing goes backwards, a
///   backfill returning what was delivered live changes nothing, and each value says whether it came live or from a
///   backfill.
/// - A kind is stale (``isStale(_:)``) from a reported window (a resumed gap, lost events, a switch with a window, an
///   expired session) until a backfill covering it succeeds. Overlapping windows merge; one call per kind runs at a
///   time; a failed call (or one that times out, ``BackfillPolicy/callTimeout``) is retried with backoff
///   (``lastBackfillFailure``). A kind without a registered backfill cannot be healed: it stays stale until one is
///   registered.
/// - Changes reach the main actor in batches, at most one hop per ``StoreConfiguration/flushInterval``.
/// - ``update(userId:organizationId:)`` changes the identity through the store: another identity starts empty and is
///   backfilled from the start (`since` is `Date.distantPast`: return the whole current state). Over a notifier made
///   without a user, nothing is fetched until someone signs in through the store.
@Observable @MainActor
public final class RealtimeStore {
    /// Devices by thing name.
    public private(set) var devices: [String: DeviceState] = [:]
    /// The organization's licence, plan and AI settings.
    public private(set) var organization = OrganizationState()
    /// The user's newest role change.
    public private(set) var roleChange: StoreValue<RoleChangeOutput>?
    /// The user's newest token revocation.
    public private(set) var tokenRevocation: StoreValue<UserTokenRevokeOutput>?
    /// The kinds with a window open and not yet backfilled.
    public private(set) var staleKinds: Set<VortexEventKind> = Set(StoreFeed.stateKinds)
    /// The newest backfill failure (it is being retried), or `nil`.
    public private(set) var lastBackfillFailure: BackfillFailure?
    /// What the store did with what it was fed.
    public private(set) var statistics = StoreStatistics()

    @ObservationIgnored private let notifier: BackendNotifier
    @ObservationIgnored let feed: StoreFeed
    /// The identity change under way: the next one waits for it, so two never interleave.
    @ObservationIgnored private var identityChange: Task<Void, Never>?
    /// The readers of ``changes()``.
    @ObservationIgnored private let changeReaders = Locked<[Int: AsyncStream<Void>.Continuation]>([:])
    @ObservationIgnored private var nextChangeReader = 0

    /// Creates a store fed by `notifier` once ``run()`` runs.
    /// - Parameters:
    ///   - notifier: where live events and reported windows come from.
    ///   - configuration: the flush interval and the backfill retry policy.
    ///   - clock: runs the flush interval and the retry delays.
    ///   - wallClock: the instant a backfill runs to.
    public init(
        notifier: BackendNotifier, configuration: StoreConfiguration = StoreConfiguration(),
        clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system
    ) {
        self.notifier = notifier
        // A notifier without a user: nothing is fetched until someone signs in through the store.
        feed = StoreFeed(configuration: configuration, clock: clock, wallClock: wallClock, signedIn: notifier.isSignedIn)
    }

    /// Registers the app's backfill for `kind`: a function returning what changed since an instant (`Date.distantPast`
    /// asks for the whole current state). Register every kind the app reads before ``run()``; a later registration
    /// makes at once the call that was due without it (the kind's load, or its open windows), and replaces an earlier
    /// one for the next call. Archive windows count (``isStale(_:)``) only once an archive backfill is registered.
    public func backfill<Output>(_ kind: BackfillKind<Output>, _ fetch: @escaping @Sendable (Date) async throws -> [Output]) {
        let wrap = kind.wrap
        feed.register(kind.kind) { since in try await fetch(since).map(wrap) }
    }

    /// The values of `kind` the store takes from now on, live or backfilled, each saying which, in the order it took
    /// them, off the main actor and one by one (not in batches): the notifier's stream of that kind with the
    /// backfills' results merged in.
    ///
    /// - State kinds (presence, recording, firmware, licence, plan, AI settings): a value is delivered when it becomes
    ///   its entity's newest; a backfilled value older than one already delivered, or equal to it, is not.
    /// - Event kinds (archive, role change, revocation): each event is delivered once, live or backfilled, even an older
    ///   one that was missed (the store's ``roleChange`` still keeps the newest). Events have no id: an event is the same
    ///   when it says the same, which thing, to what and when (the newest 4,096 per identity are remembered). A live
    ///   event without a timestamp (legacy GraphQL role changes select only `reason`) is delivered each time it arrives.
    /// - A reader that falls behind by ``StoreConfiguration/valueBufferLimit`` values gets those, then the stream
    ///   throws ``RealtimeStoreError/readerFellBehind(kind:limit:)``: nothing is dropped silently. Values follow the
    ///   store's identity, and the stream outlives ``run()`` (a view's `.task` may run it again). It ends when the
    ///   calling task's iteration is cancelled.
    public nonisolated func values<Output>(_ kind: BackfillKind<Output>) -> AsyncThrowingStream<StoreValue<Output>, any Error> {
        feed.values(kind.kind, as: Output.self)
    }

    /// Every backfill failure as it happens, for a log or an alert that must see each one (``lastBackfillFailure``
    /// holds only the newest, and a view sees it at most once per flush). Each failure is retried; its kind stays stale
    /// until a call succeeds. A reader that falls behind by 100 failures keeps the newest 100
    /// (``StoreStatistics/backfillFailures`` counts them all). Ends when the calling task's iteration is cancelled.
    public nonisolated func backfillFailures() -> AsyncStream<BackfillFailure> { feed.backfillFailures() }

    /// A signal after each batch reaches the store (and after an identity change empties it), for code that is not a
    /// view (UIKit, a command-line tool): read the store after each element. A reader that falls behind gets one
    /// element for everything it missed. Ends when the calling task's iteration is cancelled.
    public func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = nextChangeReader
        nextChangeReader += 1
        changeReaders.withLock { $0[id] = continuation }
        continuation.onTermination = { [changeReaders] _ in changeReaders.withLock { $0[id] = nil } }
        return stream
    }

    /// Whether `kind` may be missing events: a window is open and not yet backfilled.
    public func isStale(_ kind: VortexEventKind) -> Bool { staleKinds.contains(kind) }

    /// Feeds the store until the calling task is cancelled (a SwiftUI `.task`, or a task the app owns). It starts by
    /// backfilling every kind from the start (signed out, nothing is fetched; during ``update(userId:organizationId:)``,
    /// nothing until the change ends, and then for the new identity only). The newest call feeds the store: a call
    /// made while another runs (a `.task` restarted before the previous run has wound down) takes over, and the
    /// previous one returns. When the last run ends, or the notifier is shut down (its streams end), every kind becomes
    /// stale: nothing keeps it current any more (after a shutdown nothing is fetched again).
    public nonisolated func run() async {
        await feed.run(notifier: notifier, store: self)
    }

    /// Changes the notifier's identity (`userId` `nil` signs out) and starts the store afresh for it: empty, every kind
    /// stale, then backfilled from the start (signed out: nothing is fetched, even by a restarted ``run()``, and every
    /// kind stays stale). A backfill of the previous identity that fails afterwards is not reported. Change
    /// identity through the store, not on the notifier directly, or the store would keep the previous identity's
    /// state. Calls made at once take effect one after another, in order.
    public func update(userId: String?, organizationId: String?) async {
        let previous = identityChange
        let change = Task {
            await previous?.value
            await changeIdentity(userId: userId, organizationId: organizationId)
        }
        identityChange = change
        await change.value
    }

    private func changeIdentity(userId: String?, organizationId: String?) async {
        // Synchronously, before anything suspends: a batch of the previous identity still on its way here is dropped.
        let readersStopped = feed.beginIdentityChange()
        devices = [:]
        organization = OrganizationState()
        roleChange = nil
        tokenRevocation = nil
        staleKinds = Set(StoreFeed.stateKinds)
        lastBackfillFailure = nil
        signalChange()
        _ = await readersStopped?.wait()
        await notifier.update(userId: userId, organizationId: organizationId)
        feed.endIdentityChange(signedIn: userId != nil)
    }

    func apply(_ batch: StoreBatch) {
        guard feed.isCurrent(batch) else { return }
        if batch.changed.contains(.devices) { devices = batch.snapshot.devices }
        if batch.changed.contains(.organization) { organization = batch.snapshot.organization }
        if batch.changed.contains(.roleChange) { roleChange = batch.snapshot.roleChange }
        if batch.changed.contains(.tokenRevocation) { tokenRevocation = batch.snapshot.tokenRevocation }
        if batch.changed.contains(.stale) { staleKinds = batch.stale }
        if batch.changed.contains(.failure) { lastBackfillFailure = batch.failure }
        statistics = batch.statistics
        signalChange()
    }

    private func signalChange() {
        for reader in changeReaders.withLock({ Array($0.values) }) { reader.yield() }
    }
}
