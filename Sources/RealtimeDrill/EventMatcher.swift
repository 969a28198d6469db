import Foundation

/// Pairs the events two observers saw: same stream (kind), same entity, equal fields, and instants within
/// ``tolerance`` of each other.
///
/// Per stream and entity, each event of `left` (in arrival order) takes the nearest unpaired event of `right` with
/// equal fields within the tolerance: a match. What is left is paired again ignoring the fields — the same kind and
/// entity at the same time, told differently: a difference. The rest was seen on one side only.
public struct EventMatcher: Sendable {
    /// Seconds two instants of one event may lie apart (two backends need not stamp an event identically).
    public var tolerance: TimeInterval

    /// Creates a matcher.
    public init(tolerance: TimeInterval) { self.tolerance = tolerance }

    /// Two events paired as one.
    public struct Pair: Sendable, Equatable {
        /// The event of the left side.
        public var left: ObservedEvent
        /// The event of the right side.
        public var right: ObservedEvent
        /// The members that differ (empty for a match).
        public var fields: [String]
    }

    /// The outcome.
    public struct Pairing: Sendable, Equatable {
        /// Same kind, entity and fields within the tolerance.
        public var matched: [Pair] = []
        /// Same kind and entity within the tolerance, different fields.
        public var different: [Pair] = []
        /// Seen on the left only.
        public var onlyLeft: [ObservedEvent] = []
        /// Seen on the right only.
        public var onlyRight: [ObservedEvent] = []
    }

    /// Pairs `left` with `right`.
    public func pair(_ left: [ObservedEvent], _ right: [ObservedEvent]) -> Pairing {
        var pairing = Pairing()
        let leftGroups = Dictionary(grouping: left.indices) { Key(left[$0]) }
        let rightGroups = Dictionary(grouping: right.indices) { Key(right[$0]) }
        for key in Set(leftGroups.keys).union(rightGroups.keys).sorted() {
            var lefts = (leftGroups[key] ?? []).map { left[$0] }.sorted { $0.arrivedAt < $1.arrivedAt }
            var rights = (rightGroups[key] ?? []).map { right[$0] }.sorted { $0.arrivedAt < $1.arrivedAt }
            pairing.matched += take(&lefts, &rights, requireEqualFields: true)
            pairing.different += take(&lefts, &rights, requireEqualFields: false)
            pairing.onlyLeft += lefts
            pairing.onlyRight += rights
        }
        return pairing
    }

    /// Removes the pairs it finds from both lists, nearest first for each left event.
    private func take(_ lefts: inout [ObservedEvent], _ rights: inout [ObservedEvent], requireEqualFields: Bool) -> [Pair] {
        var pairs: [Pair] = []
        var unpaired: [ObservedEvent] = []
        for event in lefts {
            let candidates = rights.indices.filter { index in
                event.distance(to: rights[index]) <= tolerance
                    && (!requireEqualFields || event.differingFields(from: rights[index]).isEmpty)
            }
            guard let nearest = candidates.min(by: { event.distance(to: rights[$0]) < event.distance(to: rights[$1]) }) else {
                unpaired.append(event)
                continue
            }
            let other = rights.remove(at: nearest)
            pairs.append(Pair(left: event, right: other, fields: event.differingFields(from: other)))
        }
        lefts = unpaired
        return pairs
    }

    /// Stream and entity: events are only ever paired within one.
    private struct Key: Hashable, Comparable {
        let stream: String
        let entity: String

        init(_ event: ObservedEvent) {
            stream = event.stream
            entity = event.entity
        }

        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.stream, lhs.entity) < (rhs.stream, rhs.entity) }
    }
}
