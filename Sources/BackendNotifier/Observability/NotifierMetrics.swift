import CoreMetrics
import Foundation
import SubscriberCore

/// The notifier's metrics, named in `docs/architecture.md`. Created through an injectable factory so tests read them
/// without a global bootstrap.
struct NotifierMetrics: Sendable {
    private let factory: any MetricsFactory
    // Metric objects are made once per label and dimensions: creating one per event would ask the factory (often a
    // locked registry) on the hot path.
    private let counters = Locked<[String: Counter]>([:])
    private let timers = Locked<[String: CoreMetrics.Timer]>([:])
    init(factory: any MetricsFactory) { self.factory = factory }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        cached(counters, label, dimensions) { Counter(label: $0, dimensions: $1, factory: factory) }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        cached(timers, label, dimensions) { CoreMetrics.Timer(label: $0, dimensions: $1, factory: factory) }
    }

    private func cached<Metric>(
        _ cache: Locked<[String: Metric]>, _ label: String, _ dimensions: [(String, String)],
        make: (String, [(String, String)]) -> Metric
    ) -> Metric {
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        return cache.withLock { cache in
            if let existing = cache[key] { return existing }
            let made = make(label, dimensions)
            cache[key] = made
            return made
        }
    }

    /// The per-event metrics of one public stream, made once per stream (its hub holds them): nothing is looked up or
    /// built per event.
    struct StreamMetrics: Sendable {
        let delivered: Counter
        let latency: CoreMetrics.Timer

        /// One value delivered, published `seconds` ago (`nil`: unknown).
        func recordDelivery(latency seconds: TimeInterval?) {
            delivered.increment()
            guard let seconds, seconds >= 0, seconds.isFinite else { return }
            latency.recordNanoseconds(Int64(seconds * 1_000_000_000))
        }
    }

    /// `nil` when metrics go nowhere (swift-metrics' no-op factory, what an app that never bootstraps metrics has):
    /// then no event pays for a publish-time parse and a clock read.
    func stream(_ name: String) -> StreamMetrics? {
        guard !(factory is NOOPMetricsHandler) else { return nil }
        return StreamMetrics(
            delivered: counter("vortex_realtime_events_delivered_total", [("stream", name)]),
            latency: timer("vortex_realtime_delivery_latency", [("stream", name)]))
    }

    func decodeFailure(stream: String) {
        counter("vortex_realtime_decode_failures_total", [("stream", stream)]).increment()
    }

    func bufferDrop(stream: String, count: Int = 1) {
        counter("vortex_realtime_buffer_drops_total", [("stream", stream)]).increment(by: Int64(count))
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : scaled + attoseconds / 1_000_000_000
    }
}

extension NotifierMetrics {
    /// Records a metric the state machine asked for.
    func record(_ metric: NotifierStateMachine.Metric) {
        switch metric {
        case .connectionAttempt(let transport):
            counter("vortex_realtime_connection_attempts_total", [("transport", transport)]).increment()
        case .reconnect(let transport): counter("vortex_realtime_reconnects_total", [("transport", transport)]).increment()
        case .connected(let seconds, let transport):
            timer("vortex_realtime_connected_duration", [("transport", transport)]).recordNanoseconds(Duration.seconds(seconds).nanoseconds)
        case .transportSwitch(let from, let to):
            counter("vortex_realtime_transport_switches_total", [("from", from), ("to", to)]).increment()
        }
    }
}
