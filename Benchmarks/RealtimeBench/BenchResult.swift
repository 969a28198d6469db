import Foundation

/// The one JSON line a client prints; Benchmarks/Suite/bench.py reads it.
struct BenchResult: Encodable {
    var client: String
    var received: Int
    var seconds: Double
    var cpuSeconds: Double
    var maxRSSKB: Int
    var rssKB: Int
    var rssSamplesKB: [Int] = []
    var lost = 0
    var inOrder: Bool?
    var stalled = false
    var latency: LatencySummary?
    /// The store client's hops to the main actor.
    var mainActorHops: Int?

    enum CodingKeys: String, CodingKey {
        case client, received, seconds, lost, stalled, latency
        case mainActorHops = "main_actor_hops"
        case cpuSeconds = "cpu_seconds", maxRSSKB = "max_rss_kb", rssKB = "rss_kb", rssSamplesKB = "rss_samples_kb"
        case inOrder = "in_order"
    }

    init(label: String, received: Int, window: MeasurementWindow, stalled: Bool = false) {
        let (seconds, cpu) = window.elapsed()
        self.client = label
        self.received = received
        self.seconds = seconds
        self.cpuSeconds = cpu
        self.maxRSSKB = ProcessUsage.maxRSSKB()
        self.rssKB = ProcessUsage.currentRSSKB()
        self.stalled = stalled
    }

    func print() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(self)) ?? Data(#"{"error":"unencodable result"}"#.utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
