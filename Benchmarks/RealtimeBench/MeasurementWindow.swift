/// The measured span of a client run: from just before it connects to its last counted event, so process start-up
/// (and, for the Python peers, imports) stays out of CPU µs/event.
struct MeasurementWindow: Sendable {
    let startedAt: ContinuousClock.Instant
    let cpuAtStart: Double

    static func start() -> MeasurementWindow {
        MeasurementWindow(startedAt: .now, cpuAtStart: ProcessUsage.cpuSeconds())
    }

    /// Seconds and CPU seconds since the start.
    func elapsed() -> (seconds: Double, cpuSeconds: Double) {
        let duration = ContinuousClock.now - startedAt
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return (seconds, ProcessUsage.cpuSeconds() - cpuAtStart)
    }
}
