import Foundation

/// The parity check's result: per stream, what each transport delivered for the same published events.
public struct ParityReport: Sendable, Codable, Equatable {
    /// One stream.
    public struct Stream: Sendable, Codable, Equatable {
        /// The stream's name (`devicePresence`, `device`, ...).
        public var stream: String
        /// Events published that this stream should deliver.
        public var published: Int
        /// Values received on AppSync Events.
        public var appsync: Int
        /// Values received on GraphQL.
        public var graphql: Int
        /// Whether both sequences are identical, value for value, in order.
        public var identical: Bool
        /// The first difference, when not identical.
        public var difference: String?
    }

    /// Every stream.
    public var streams: [Stream]
    /// Whether every stream delivered everything, identically, on both transports.
    public var passed: Bool { streams.allSatisfy { $0.identical && $0.appsync == $0.published && $0.graphql == $0.published } }
}

/// The rollback drill's result: one notifier, switched AppSync → GraphQL → AppSync while events flow.
public struct RollbackReport: Sendable, Codable, Equatable {
    /// One stream.
    public struct Stream: Sendable, Codable, Equatable {
        /// The stream's name.
        public var stream: String
        /// Events published that this stream should deliver.
        public var published: Int
        /// Values received (duplicates included).
        public var received: Int
        /// Events never received.
        public var missing: Int
        /// Of those, the ones published outside every reported switch window (must be zero).
        public var missingOutsideWindows: Int
        /// Values received more than once (must be zero).
        public var duplicated: Int
    }

    /// One transport switch as the notifier reported it.
    public struct Switch: Sendable, Codable, Equatable {
        /// From which transport.
        public var from: String
        /// To which transport.
        public var to: String
        /// The reported window start and end (ISO 8601).
        public var windowStart: String
        /// The reported window end.
        public var windowEnd: String
        /// How long the switch call took, in milliseconds.
        public var milliseconds: Double
    }

    /// Every stream.
    public var streams: [Stream]
    /// The switches.
    public var switches: [Switch]
    /// Publish-to-consumer latency percentiles over all received values, in milliseconds.
    public var latencyP50Milliseconds: Double
    /// The 99th percentile.
    public var latencyP99Milliseconds: Double
    /// Whether nothing was lost outside the reported windows and nothing was delivered twice.
    public var passed: Bool { streams.allSatisfy { $0.missingOutsideWindows == 0 && $0.duplicated == 0 } && switches.count == 2 }
}

/// Both results, as `drill` prints them.
public struct DrillReport: Sendable, Codable, Equatable {
    /// The parity check.
    public var parity: ParityReport
    /// The rollback drill.
    public var rollback: RollbackReport

    /// Creates a report from both results.
    public init(parity: ParityReport, rollback: RollbackReport) {
        self.parity = parity
        self.rollback = rollback
    }
    /// Whether both passed.
    public var passed: Bool { parity.passed && rollback.passed }

    /// A readable table.
    public func rendered() -> String {
        var lines = ["Parity (same events, AppSync Events vs GraphQL, both APIs)", ""]
        lines.append(Self.row(["stream", "published", "appsync", "graphql", "identical"]))
        for stream in parity.streams {
            lines.append(
                Self.row([stream.stream, "\(stream.published)", "\(stream.appsync)", "\(stream.graphql)", stream.identical ? "yes" : "NO"]))
            if let difference = stream.difference { lines.append("    \(difference)") }
        }
        lines += ["", "Rollback drill (AppSync Events -> GraphQL -> AppSync Events while events flow)", ""]
        lines.append(Self.row(["stream", "published", "received", "missing", "lost outside", "duplicated"]))
        for stream in rollback.streams {
            lines.append(
                Self.row([
                    stream.stream, "\(stream.published)", "\(stream.received)", "\(stream.missing)", "\(stream.missingOutsideWindows)",
                    "\(stream.duplicated)",
                ]))
        }
        lines.append("")
        for item in rollback.switches {
            lines.append(
                "switch \(item.from) -> \(item.to): \(String(format: "%.0f", item.milliseconds)) ms, window \(item.windowStart) ... \(item.windowEnd)"
            )
        }
        lines.append(String(format: "latency p50 %.1f ms, p99 %.1f ms", rollback.latencyP50Milliseconds, rollback.latencyP99Milliseconds))
        lines.append("")
        lines.append(passed ? "PASSED: everything matched" : "FAILED: see the rows above")
        return lines.joined(separator: "\n")
    }

    static func row(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == 0
                ? cell.padding(toLength: 16, withPad: " ", startingAt: 0) : String(repeating: " ", count: max(1, 13 - cell.count)) + cell
        }.joined()
    }
}
