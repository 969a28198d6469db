import CoreMetrics
import Foundation

/// The notifier's metrics, named in `docs/architecture.md`. Created through an injectable factory so tests read them
/// without a global bootstrap.
struct NotifierMetrics: Sendable {
    private let factory: any MetricsFactory

    init(factory: any MetricsFactory) { self.factory = factory }

    func connectionAttempt(transport: String) {
        Counter(label: "vortex_realtime_connection_attempts_total", dimensions: [("transport", transport)], factory: factory).increment()
    }

    func reconnect(transport: String) {
        Counter(label: "vortex_realtime_reconnects_total", dimensions: [("transport", transport)], factory: factory).increment()
    }

    func connected(for duration: Duration, transport: String) {
        Timer(label: "vortex_realtime_connected_duration", dimensions: [("transport", transport)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    func delivered(stream: String) {
        Counter(label: "vortex_realtime_events_delivered_total", dimensions: [("stream", stream)], factory: factory).increment()
    }

    func decodeFailure(stream: String) {
        Counter(label: "vortex_realtime_decode_failures_total", dimensions: [("stream", stream)], factory: factory).increment()
    }

    func bufferDrop(stream: String) {
        Counter(label: "vortex_realtime_buffer_drops_total", dimensions: [("stream", stream)], factory: factory).increment()
    }

    func latency(_ seconds: TimeInterval, stream: String) {
        guard seconds >= 0, seconds.isFinite else { return }
        Timer(label: "vortex_realtime_delivery_latency", dimensions: [("stream", stream)], factory: factory)
            .recordNanoseconds(Int64(seconds * 1_000_000_000))
    }

    func transportSwitch(from: String, to: String) {
        Counter(label: "vortex_realtime_transport_switches_total", dimensions: [("from", from), ("to", to)], factory: factory).increment()
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
