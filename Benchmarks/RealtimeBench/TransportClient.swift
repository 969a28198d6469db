import SubscriberCore

/// A transport's subscription stream, consumed as an app would (`for try await`), counting payloads.
struct TransportClient {
    let options: RealtimeBench

    func run(window: MeasurementWindow, progress: Progress) async throws -> BenchResult {
        let wire = options.wire
        let transport = try TransportMaker.make(wire, options: options)
        let request: SubscriptionRequest =
            switch wire {
            case .appsync: .channel(options.channel)
            case .graphql: .graphQL(DeviceStateOperation.operation(organizationId: options.org))
            }
        var tally = EventTally(target: options.count, rssEvery: options.rssEvery, progress: progress, latencyWarmup: options.latency ? options.warmup : nil)
        consume: for try await event in await transport.subscribe(request) {
            switch event {
            case .payload(let payload):
                tally.latency?.record(json: payload.json)
                if tally.count(size: payload.json.count) { break consume }
            case .live:
                if options.latency { ReadySignal.send() }
            case .lost(let report):
                tally.lost += report.count
            case .resumed:
                break
            }
        }
        let result = tally.result(label: wire.rawValue, window: window)
        await transport.disconnect()
        return result
    }
}
