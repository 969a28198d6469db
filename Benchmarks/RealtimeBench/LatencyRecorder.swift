import Foundation

/// Publish -> consumer latencies. The publisher writes its send time into the event as `"thingName":"lat-<unix ns>"`,
/// so one clock (CLOCK_REALTIME, shared by both processes on this machine) measures the whole path.
struct LatencyRecorder {
    private static let marker = Data(#""thingName":"lat-"#.utf8)
    private(set) var samplesNanos: [Int64] = []
    private var seen = 0
    let warmup: Int

    init(expected: Int, warmup: Int) {
        self.warmup = warmup
        samplesNanos.reserveCapacity(expected)
    }

    /// Records the event in `json`; `false` when it carries no send time.
    mutating func record(json: Data) -> Bool {
        guard let range = json.range(of: Self.marker) else { return false }
        var sent: Int64 = 0
        for byte in json[range.upperBound...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            sent = sent * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        record(sentNanos: sent)
        return true
    }

    /// Records a typed event's `thingName` (`lat-<unix ns>`); `false` when it carries no send time.
    mutating func record(thingName: String?) -> Bool {
        guard let thingName, thingName.hasPrefix("lat-"), let sent = Int64(thingName.dropFirst(4)) else { return false }
        record(sentNanos: sent)
        return true
    }

    private mutating func record(sentNanos: Int64) {
        let now = ProcessUsage.unixNanos()
        seen += 1
        if seen > warmup { samplesNanos.append(now - sentNanos) }
    }

    func summary() -> LatencySummary? {
        guard !samplesNanos.isEmpty else { return nil }
        let sorted = samplesNanos.sorted()
        func percentile(_ p: Double) -> Double {
            let index = min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)
            return Double(sorted[max(0, index)]) / 1000
        }
        return LatencySummary(
            samples: sorted.count, p50: percentile(50), p90: percentile(90), p99: percentile(99), p999: percentile(99.9),
            max: Double(sorted[sorted.count - 1]) / 1000)
    }
}

/// Latency percentiles in microseconds.
struct LatencySummary: Encodable {
    var samples: Int
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    var max: Double
}
