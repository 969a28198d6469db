import Foundation

/// What `vortex-realtime parity` found: the events two notifiers of one identity (AppSync Events and GraphQL) delivered
/// side by side, matched (``EventMatcher``) and judged against the gaps each side reported (``ParityMatcher``).
///
/// JSON: `matched`, `onlyAppSync`, `onlyGraphQL`, `different`, `insideGaps`, `atEdges` are counts and `gaps` holds a
/// count per side; the events themselves are under `events` (same keys, `gaps` per side as lists).
public struct ShadowParityReport: Sendable, Codable, Equatable {
    /// Something per side.
    public struct PerSide<Value: Sendable & Codable & Equatable>: Sendable, Codable, Equatable {
        /// AppSync Events' value.
        public var appsync: Value
        /// GraphQL's value.
        public var graphql: Value
    }

    /// Two events told as one.
    public struct MatchedPair: Sendable, Codable, Equatable {
        /// The AppSync Events side.
        public var appsync: ObservedEvent
        /// The GraphQL side.
        public var graphql: ObservedEvent
        /// GraphQL's arrival minus AppSync's, in milliseconds.
        public var arrivalDifferenceMilliseconds: Double
    }

    /// An event (or a pair) that did not match.
    public struct Mismatch: Sendable, Codable, Equatable {
        /// `onlyAppSync`, `onlyGraphQL` or `different`.
        public var category: String
        /// The AppSync Events side, if it saw the event.
        public var appsync: ObservedEvent?
        /// The GraphQL side, if it saw the event.
        public var graphql: ObservedEvent?
        /// For `different`: the members that differ.
        public var fields: [String]?
        /// The gap that explains it (``ShadowParityReport/Events/insideGaps``), if any.
        public var gap: ReportedGap?

        /// One line for the human summary.
        public var summary: String {
            var line =
                "\(category): "
                + [appsync.map { "appsync \($0.summary)" }, graphql.map { "graphql \($0.summary)" }]
                .compactMap { $0 }.joined(separator: " | ")
            if let fields, !fields.isEmpty { line += " (fields: \(fields.joined(separator: ", ")))" }
            if let gap { line += " inside \(gap.summary)" }
            return line
        }
    }

    /// The arrival-time difference of matched events.
    public struct ArrivalDifference: Sendable, Codable, Equatable {
        /// Median of |GraphQL − AppSync|, in milliseconds.
        public var p50: Double
        /// 99th percentile of |GraphQL − AppSync|, in milliseconds.
        public var p99: Double
        /// Median of GraphQL − AppSync (positive: GraphQL later), in milliseconds.
        public var medianGraphQLMinusAppSync: Double
    }

    /// The events behind each count.
    public struct Events: Sendable, Codable, Equatable {
        /// Matched pairs.
        public var matched: [MatchedPair]
        /// Seen on AppSync Events only, outside every gap GraphQL reported.
        public var onlyAppSync: [ObservedEvent]
        /// Seen on GraphQL only, outside every gap AppSync Events reported.
        public var onlyGraphQL: [ObservedEvent]
        /// Same kind and entity at the same time, different fields, outside every reported gap.
        public var different: [Mismatch]
        /// Mismatches inside a gap the side that missed (or either side, for `different`) reported: listed apart,
        /// not counted as mismatches (the app was told to refetch).
        public var insideGaps: [Mismatch]
        /// Unmatched events that arrived before the run's start or after its end (while it settled): listed, not
        /// judged.
        public var atEdges: [Mismatch]
        /// Every gap each side reported.
        public var gaps: PerSide<[ReportedGap]>
    }

    /// Whether nothing differs outside reported gaps (the command's exit status 0).
    public var passed: Bool
    /// Matched events.
    public var matched: Int
    /// True mismatches: seen on AppSync Events only.
    public var onlyAppSync: Int
    /// True mismatches: seen on GraphQL only.
    public var onlyGraphQL: Int
    /// True mismatches: told differently.
    public var different: Int
    /// Mismatches explained by a reported gap.
    public var insideGaps: Int
    /// Unjudged events at the run's edges.
    public var atEdges: Int
    /// Gaps reported per side.
    public var gaps: PerSide<Int>
    /// The arrival-time difference of matched events; `nil` when nothing matched.
    public var arrivalDifferenceMilliseconds: ArrivalDifference?
    /// The matching tolerance, in seconds.
    public var toleranceSeconds: Double
    /// How long both sides were observed, in seconds.
    public var durationSeconds: Double
    /// The events.
    public var events: Events

    /// Creates a report from the judged events (counts and verdict derived).
    public init(events: Events, toleranceSeconds: Double, durationSeconds: Double) {
        self.events = events
        self.matched = events.matched.count
        self.onlyAppSync = events.onlyAppSync.count
        self.onlyGraphQL = events.onlyGraphQL.count
        self.different = events.different.count
        self.insideGaps = events.insideGaps.count
        self.atEdges = events.atEdges.count
        self.gaps = PerSide(appsync: events.gaps.appsync.count, graphql: events.gaps.graphql.count)
        self.passed = onlyAppSync == 0 && onlyGraphQL == 0 && different == 0
        self.toleranceSeconds = toleranceSeconds
        self.durationSeconds = durationSeconds
        let differences = events.matched.map(\.arrivalDifferenceMilliseconds)
        if differences.isEmpty {
            arrivalDifferenceMilliseconds = nil
        } else {
            let magnitudes = differences.map(abs).sorted()
            arrivalDifferenceMilliseconds = ArrivalDifference(
                p50: Self.percentile(magnitudes, 0.5), p99: Self.percentile(magnitudes, 0.99),
                medianGraphQLMinusAppSync: Self.percentile(differences.sorted(), 0.5))
        }
    }

    /// Every event either side saw (each matched pair once), for a judge that needs one reference list.
    public var allEvents: [ObservedEvent] {
        events.matched.map(\.appsync) + events.onlyAppSync + events.onlyGraphQL
            + (events.different + events.insideGaps + events.atEdges).flatMap { [$0.appsync, $0.graphql].compactMap { $0 } }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    /// The human summary.
    public func rendered() -> String {
        var lines = [
            String(
                format: "Shadow parity (AppSync Events vs GraphQL, the nine streams) over %.1f s, tolerance %.1f s", durationSeconds,
                toleranceSeconds),
            "",
        ]
        lines.append(DrillReport.row(["matched", "\(matched)"]))
        lines.append(DrillReport.row(["onlyAppSync", "\(onlyAppSync)"]))
        lines.append(DrillReport.row(["onlyGraphQL", "\(onlyGraphQL)"]))
        lines.append(DrillReport.row(["different", "\(different)"]))
        lines.append(DrillReport.row(["inside gaps", "\(insideGaps)"]) + "  (explained by a reported gap; not mismatches)")
        if atEdges > 0 {
            lines.append(DrillReport.row(["at the edges", "\(atEdges)"]) + "  (counterpart possibly before or after the run)")
        }
        lines.append("gaps reported: appsync \(gaps.appsync), graphql \(gaps.graphql)")
        for gap in events.gaps.appsync + events.gaps.graphql { lines.append("  " + gap.summary) }
        if let arrival = arrivalDifferenceMilliseconds {
            lines.append(
                String(
                    format: "arrival difference |graphql - appsync|: p50 %.1f ms, p99 %.1f ms (median graphql - appsync %+.1f ms)",
                    arrival.p50,
                    arrival.p99, arrival.medianGraphQLMinusAppSync))
        }
        let mismatches =
            events.onlyAppSync.map { Mismatch(category: "onlyAppSync", appsync: $0) }
            + events.onlyGraphQL.map { Mismatch(category: "onlyGraphQL", graphql: $0) } + events.different
        if !mismatches.isEmpty {
            lines.append("")
            lines.append("mismatches:")
            for mismatch in mismatches { lines.append("  " + mismatch.summary) }
        }
        if !events.insideGaps.isEmpty {
            lines.append("")
            lines.append("inside reported gaps (not mismatches):")
            for mismatch in events.insideGaps { lines.append("  " + mismatch.summary) }
        }
        lines.append("")
        if matched + onlyAppSync + onlyGraphQL + different + insideGaps == 0 {
            lines.append(passed ? "PASSED: no differences (but no event arrived: nothing was compared)" : "FAILED")
        } else {
            lines.append(passed ? "PASSED: nothing differs outside reported gaps" : "FAILED: events differ outside reported gaps")
        }
        return lines.joined(separator: "\n")
    }
}
