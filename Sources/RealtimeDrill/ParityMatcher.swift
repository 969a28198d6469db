import Foundation

/// Judges what two notifiers of one identity delivered side by side — AppSync Events and GraphQL — into a
/// ``ShadowParityReport``: the logic behind `vortex-realtime parity` and the drill's parity with a `command` or `none`
/// trigger.
///
/// 1. ``EventMatcher`` pairs the events (same kind, entity and fields, instants within ``tolerance``).
/// 2. Events that arrived before `start` (both sides live, the run not yet begun) are candidates for pairing only: a
///    pair that arrived entirely before the run is dropped. A pair that arrived while the run settled after `end`
///    belongs to the run (its events were in flight when the traffic stopped). An unpaired event before `start` or
///    after `end` is listed under `atEdges`, not judged (its counterpart may have come before the notifiers were live,
///    or after the run stopped).
/// 3. A mismatch inside a gap that explains it is listed under `insideGaps`: an event seen on AppSync Events only,
///    inside a gap GraphQL reported (GraphQL said it may have missed events then), and the reverse; a difference inside
///    a gap either side reported.
/// 4. The rest are true mismatches: `onlyAppSync`, `onlyGraphQL`, `different`.
///
/// A gap covers an event when it concerns the event's stream or upstream (a switch: every stream) and the event's
/// instant — its own timestamp when it has one, else its arrival — lies inside the window (±50 ms).
public struct ParityMatcher: Sendable {
    /// Seconds two instants of one event may lie apart. Default 2.
    public var tolerance: TimeInterval

    /// Creates a matcher.
    public init(tolerance: TimeInterval = 2) { self.tolerance = tolerance }

    /// The report on `appsync` and `graphql` events observed from `start` to `end`, with the gaps each side reported.
    public func judge(
        appsync: [ObservedEvent], graphql: [ObservedEvent], appSyncGaps: [ReportedGap], graphQLGaps: [ReportedGap],
        start: Date, end: Date
    ) -> ShadowParityReport {
        let pairing = EventMatcher(tolerance: tolerance).pair(appsync, graphql)
        func outside(_ event: ObservedEvent) -> Bool { event.arrivedAt < start || event.arrivedAt > end }
        func early(_ event: ObservedEvent) -> Bool { event.arrivedAt < start }
        var events = ShadowParityReport.Events(
            matched: pairing.matched.filter { !(early($0.left) && early($0.right)) }.map {
                .init(
                    appsync: $0.left, graphql: $0.right,
                    arrivalDifferenceMilliseconds: $0.right.arrivedAt.timeIntervalSince($0.left.arrivedAt) * 1000)
            },
            onlyAppSync: [], onlyGraphQL: [], different: [], insideGaps: [], atEdges: [],
            gaps: .init(appsync: appSyncGaps, graphql: graphQLGaps))
        func gap(for event: ObservedEvent, in gaps: [ReportedGap]) -> ReportedGap? {
            gaps.first { $0.covers(stream: event.stream) && $0.contains(event.instant) }
        }
        /// Files an event one side saw alone under the run's edges, or inside a gap the other side reported; `false` when
        /// neither explains it (a true mismatch).
        func explained(_ mismatch: ShadowParityReport.Mismatch, _ event: ObservedEvent, byGapsOf otherSide: [ReportedGap]) -> Bool {
            if outside(event) {
                events.atEdges.append(mismatch)
            } else if let gap = gap(for: event, in: otherSide) {
                events.insideGaps.append(with(mismatch, gap))
            } else {
                return false
            }
            return true
        }
        for event in pairing.onlyLeft where !explained(.init(category: "onlyAppSync", appsync: event), event, byGapsOf: graphQLGaps) {
            events.onlyAppSync.append(event)
        }
        for event in pairing.onlyRight where !explained(.init(category: "onlyGraphQL", graphql: event), event, byGapsOf: appSyncGaps) {
            events.onlyGraphQL.append(event)
        }
        for pair in pairing.different where !(outside(pair.left) && outside(pair.right)) {
            let mismatch = ShadowParityReport.Mismatch(category: "different", appsync: pair.left, graphql: pair.right, fields: pair.fields)
            let explaining = [
                gap(for: pair.left, in: appSyncGaps + graphQLGaps), gap(for: pair.right, in: appSyncGaps + graphQLGaps),
            ].compactMap { $0 }.first
            if let explaining {
                events.insideGaps.append(with(mismatch, explaining))
            } else {
                events.different.append(mismatch)
            }
        }
        return ShadowParityReport(events: events, toleranceSeconds: tolerance, durationSeconds: end.timeIntervalSince(start))
    }

    private func with(_ mismatch: ShadowParityReport.Mismatch, _ gap: ReportedGap) -> ShadowParityReport.Mismatch {
        var copy = mismatch
        copy.gap = gap
        return copy
    }
}
