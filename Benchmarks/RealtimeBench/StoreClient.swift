import BackendNotifier
import Logging
import RealtimeStore
import SubscriberCore

/// A `RealtimeStore` fed by the notifier's nine-method streams, read on the main actor after each coalesced change
/// (one hop per flush interval), as a SwiftUI view would: issue 28's "consumer reading the store on the main actor".
/// An event counts once the store has taken it (applied, or dropped as older or a duplicate).
struct StoreClient {
    let options: RealtimeBench

    func run(window: MeasurementWindow, progress: Progress) async throws -> BenchResult {
        var configuration = NotifierConfiguration()
        if !options.defaultBuffers { configuration.bufferPolicy = ObserverBufferPolicy(limit: options.count + 16) }
        let notifier = BackendNotifier(
            transport: try TransportMaker.make(options.wire, options: options), userId: options.user, organizationId: options.org,
            configuration: configuration, logger: Logger(label: "bench.store"))
        let events = await notifier.connectionEvents()
        let watcher = Task {
            for await event in events {
                if case .eventsLost(_, _, let loss) = event { progress.addLost(loss.count) }
            }
        }
        let store = await RealtimeStore(notifier: notifier)
        let feeding = Task { await store.run() }
        let target = options.count
        let rssEvery = options.rssEvery
        let (tally, hops) = await Task { @MainActor in
            var tally = EventTally(target: target, rssEvery: rssEvery, progress: progress, latencyWarmup: nil)
            var hops = 0
            for await _ in store.changes() {
                hops += 1
                let statistics = store.statistics
                let taken = statistics.applied + statistics.older + statistics.duplicates
                _ = store.devices.count  // what a view reads
                var done = false
                while tally.received < taken, !done { done = tally.count() }
                if done { break }
            }
            return (tally, hops)
        }.value
        feeding.cancel()
        watcher.cancel()
        var result = tally.result(label: "store-\(options.wire.rawValue)", window: window)
        result.mainActorHops = hops
        await notifier.update(userId: nil, organizationId: nil)
        return result
    }
}
