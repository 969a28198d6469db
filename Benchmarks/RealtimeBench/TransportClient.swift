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
        var primed = false
        // Read once: an argument-parser property costs a runtime metadata lookup per read.
        let latency = options.latency
        var tally = EventTally(
            target: options.count, rssEvery: options.rssEvery, progress: progress, latencyWarmup: latency ? options.warmup : nil)
        consume: for try await event in await transport.subscribe(request) {
            switch event {
            case .payload(let payload):
                if latency {
                    // Priming events (sent until the first one arrives) carry no send time and do not count.
                    if !primed {
                        primed = true
                        ReadySignal.send()
                    }
                    guard tally.latency?.record(json: payload.json) == true else { continue }
                }
                if tally.count(size: payload.json.count) { break consume }
            case .live:
                break
            case .lost(let report):
                tally.addLost(report.count)
                if tally.isComplete { break consume }
            case .resumed:
                break
            }
        }
        let result = tally.result(label: wire.rawValue, window: window)
        await transport.disconnect()
        return result
    }
}
