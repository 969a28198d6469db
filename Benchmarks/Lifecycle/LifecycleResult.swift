import Foundation

/// One measurement: seconds from the event to the link's end, to the next accepted connection, to live again.
struct LifecycleResult: Sendable, CustomStringConvertible {
    var transport: TransportKind
    var scenario: Scenario
    /// From the event to the transport reporting the link lost (`nil`: it was lost before the event, as in
    /// `network-return`, where the count starts when the network is back).
    var detected: Double?
    var reconnected: Double
    var live: Double
    /// Connection attempts the proxy saw while the network was away (`network-return` only).
    var attemptsWhileOffline: Int?

    var description: String {
        let detect = detected.map { String(format: "%.2f", $0) } ?? "-"
        let offline = attemptsWhileOffline.map { ", \($0) attempts while offline" } ?? ""
        return
            "detected \(detect) s, reconnected \(String(format: "%.2f", reconnected)) s, live \(String(format: "%.2f", live)) s\(offline)"
    }

    /// A Markdown table: median (min–max) per transport and scenario.
    static func table(_ results: [LifecycleResult]) -> String {
        func summary(_ values: [Double]) -> String {
            guard !values.isEmpty else { return "-" }
            let sorted = values.sorted()
            let median = sorted[sorted.count / 2]
            if sorted.count == 1 { return String(format: "%.2f s", median) }
            return String(format: "%.2f s (%.2f–%.2f)", median, sorted.first ?? 0, sorted.last ?? 0)
        }
        var lines = [
            "| transport | event | detected | reconnected | live again | rounds |",
            "|---|---|---|---|---|---|",
        ]
        for transport in TransportKind.allCases {
            for scenario in Scenario.allCases {
                let matching = results.filter { $0.transport == transport && $0.scenario == scenario }
                guard !matching.isEmpty else { continue }
                var detected = summary(matching.compactMap(\.detected))
                if scenario == .networkReturn {
                    let attempts = matching.compactMap(\.attemptsWhileOffline).reduce(0, +)
                    detected = "(while away; \(attempts) attempts)"
                }
                lines.append(
                    "| \(transport.rawValue) | \(scenario.title) | \(detected) | \(summary(matching.map(\.reconnected))) | "
                        + "\(summary(matching.map(\.live))) | \(matching.count) |")
            }
        }
        return lines.joined(separator: "\n")
    }
}
