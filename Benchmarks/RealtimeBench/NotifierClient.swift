import BackendNotifier
import Logging
import SubscriberCore

/// `BackendNotifier.deviceValues()` (the merged device-state stream, models decoded) over either transport.
struct NotifierClient {
    let options: RealtimeBench

    /// `dev0000` ... `dev0999`: the firehose cycles through these, so order is checked with one comparison per event.
    private static let expectedNames = (0..<1000).map { "dev" + String(repeating: "0", count: 4 - String($0).count) + String($0) }

    func run(window: MeasurementWindow, progress: Progress) async throws -> BenchResult {
        let wire = options.wire
        var configuration = NotifierConfiguration()
        if !options.defaultBuffers { configuration.bufferPolicy = ObserverBufferPolicy(limit: options.count + 16) }
        let notifier = BackendNotifier(
            transport: try TransportMaker.make(wire, options: options), userId: options.user, organizationId: options.org,
            configuration: configuration, logger: Logger(label: "bench.notifier"))
        let events = await notifier.connectionEvents()
        let latency = options.latency
        let watcher = Task {
            for await event in events {
                if case .eventsLost(_, _, let loss) = event { progress.addLost(loss.count) }
            }
        }
        // Observer-buffer drops are counted by the notifier, not reported on connectionEvents(): poll the count.
        let dropPoller = Task {
            while !Task.isCancelled {
                progress.setObserverDrops(await notifier.statistics().streams["device"]?.dropped ?? 0)
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        var primed = false
        var tally = EventTally(
            target: options.count, rssEvery: options.rssEvery, progress: progress, latencyWarmup: latency ? options.warmup : nil)
        var inOrder = true
        for await device in await notifier.deviceValues() {
            if latency {
                // Priming events (sent until the first one arrives) carry no send time and do not count.
                if !primed {
                    primed = true
                    ReadySignal.send()
                }
                guard tally.latency?.record(thingName: device.thingName) == true else { continue }
            } else if inOrder, device.thingName != Self.expectedNames[tally.received % 1000] {
                inOrder = false
            }
            if tally.count() { break }
        }
        dropPoller.cancel()
        progress.setObserverDrops(await notifier.statistics().streams["device"]?.dropped ?? 0)
        var result = tally.result(label: "notifier-\(wire.rawValue)", window: window)
        result.inOrder = latency ? nil : inOrder
        watcher.cancel()
        await notifier.update(userId: nil, organizationId: nil)
        return result
    }
}
