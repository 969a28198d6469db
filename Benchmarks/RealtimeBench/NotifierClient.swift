import BackendNotifier
import Logging
import Synchronization

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
        let reportedLosses = Losses()
        let events = await notifier.connectionEvents()
        let latency = options.latency
        let watcher = Task {
            var signalled = false
            for await event in events {
                switch event {
                case .live where latency && !signalled:
                    signalled = true
                    ReadySignal.send()
                case .eventsLost(_, _, let loss):
                    reportedLosses.add(loss.count)
                default: break
                }
            }
        }
        var tally = EventTally(target: options.count, rssEvery: options.rssEvery, progress: progress, latencyWarmup: latency ? options.warmup : nil)
        var inOrder = true
        for await device in await notifier.deviceValues() {
            if latency {
                tally.latency?.record(thingName: device.thingName)
            } else if inOrder, device.thingName != Self.expectedNames[tally.received % 1000] {
                inOrder = false
            }
            if tally.count() { break }
        }
        let statistics = await notifier.statistics()
        tally.lost = reportedLosses.total + statistics.streams.values.reduce(0) { $0 + $1.dropped }
        var result = tally.result(label: "notifier-\(wire.rawValue)", window: window)
        result.inOrder = latency ? nil : inOrder
        watcher.cancel()
        await notifier.update(userId: nil, organizationId: nil)
        return result
    }
}

/// Events the notifier reported lost on `connectionEvents()`.
final class Losses: Sendable {
    private let count = Mutex(0)
    func add(_ value: Int) { count.withLock { $0 += value } }
    var total: Int { count.withLock { $0 } }
}
