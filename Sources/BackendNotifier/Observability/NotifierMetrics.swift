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
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        return counters.withLock { cache in
            if let existing = cache[key] { return existing }
            let made = Counter(label: label, dimensions: dimensions, factory: factory)
            cache[key] = made
            return made
        }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        return timers.withLock { cache in
            if let existing = cache[key] { return existing }
            let made = CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
            cache[key] = made
            return made
        }
    }

    func connectionAttempt(transport: String) {
        counter("vortex_realtime_connection_attempts_total", [("transport", transport)]).increment()
    }

    func reconnect(transport: String) {
        counter("vortex_realtime_reconnects_total", [("transport", transport)]).increment()
    }

    func connected(for duration: Duration, transport: String) {
        timer("vortex_realtime_connected_duration", [("transport", transport)])
            .recordNanoseconds(duration.nanoseconds)
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

    func transportSwitch(from: String, to: String) {
        counter("vortex_realtime_transport_switches_total", [("from", from), ("to", to)]).increment()
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
        case .connectionAttempt(let transport): connectionAttempt(transport: transport)
        case .reconnect(let transport): reconnect(transport: transport)
        case .connected(let seconds, let transport): connected(for: .seconds(seconds), transport: transport)
        case .transportSwitch(let from, let to): transportSwitch(from: from, to: to)
        }
    }
}
