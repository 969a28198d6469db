/// What a client counts on its consumer loop: events, RSS samples, latencies, losses.
struct EventTally {
    let target: Int
    let rssEvery: Int
    let progress: Progress
    private(set) var received = 0
    private(set) var bytes = 0
    var rssSamplesKB: [Int] = []
    var latency: LatencyRecorder?
    private(set) var lost = 0

    init(target: Int, rssEvery: Int, progress: Progress, latencyWarmup: Int?) {
        self.target = target
        self.rssEvery = rssEvery
        self.progress = progress
        self.latency = latencyWarmup.map { LatencyRecorder(expected: target, warmup: $0) }
    }

    /// Counts one event of `size` bytes; `true` once the target is reached.
    mutating func count(size: Int = 0) -> Bool {
        received += 1
        bytes &+= size
        progress.publish(received)
        if rssEvery > 0, received % rssEvery == 0 { rssSamplesKB.append(ProcessUsage.currentRSSKB()) }
        return received >= target
    }

    /// Events the stream reported lost (they will not arrive).
    mutating func addLost(_ count: Int) {
        lost += count
        progress.addLost(count)
    }

    /// Whether every event arrived or was reported lost.
    var isComplete: Bool { received + lost >= target }

    /// The result line for this tally.
    func result(label: String, window: MeasurementWindow) -> BenchResult {
        progress.publish(received)
        var result = BenchResult(label: label, received: received, window: window)
        result.rssSamplesKB = rssSamplesKB
        result.lost = progress.lostCount
        result.latency = latency?.summary()
        return result
    }
}
