/// The identities of the events the old transport delivered during a switch's overlap, as a bounded multiset: each
/// recorded delivery can be matched (consumed) once; beyond `limit` the oldest are forgotten first.
struct DeliveredLedger: Sendable {
    /// The timestamps recorded per kind, entity and value, oldest first (`nil`: the delivery carried none).
    private var entries: [EventIdentity.Key: [String?]] = [:]
    /// Recorded identities in order, for forgetting the oldest (`head` is the oldest still counted).
    private var order: [EventIdentity] = []
    private var head = 0
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether nothing is left to match.
    var isEmpty: Bool { entries.isEmpty }

    /// Records one delivered event (the identities of everything its payload carried).
    mutating func record(_ identities: [EventIdentity]) {
        guard limit > 0 else { return }
        for identity in identities {
            entries[identity.key, default: []].append(identity.timestamp)
            order.append(identity)
        }
        while order.count - head > limit {
            forget(order[head])
            head += 1
        }
        if head > limit {
            order.removeFirst(head)
            head = 0
        }
    }

    /// Matches a payload's identities: `true` (and each consumed once) when every one of them was recorded; `false`
    /// (nothing consumed) otherwise, or when the payload has none (it could not be read). A recorded delivery with
    /// the same timestamp is preferred to one matched because either lacks a timestamp.
    mutating func consume(_ identities: [EventIdentity]) -> Bool {
        guard !identities.isEmpty else { return false }
        var changed: [EventIdentity.Key: [String?]] = [:]
        for identity in identities {
            var recorded = changed[identity.key] ?? entries[identity.key] ?? []
            guard
                let index = recorded.firstIndex(where: { $0 == identity.timestamp })
                    ?? recorded.firstIndex(where: { identity.matches(recorded: $0) })
            else { return false }
            recorded.remove(at: index)
            changed[identity.key] = recorded
        }
        for (key, recorded) in changed { entries[key] = recorded.isEmpty ? nil : recorded }
        return true
    }

    /// Forgets the oldest recorded delivery of `identity` (it may have been consumed already).
    private mutating func forget(_ identity: EventIdentity) {
        guard var recorded = entries[identity.key], let index = recorded.firstIndex(where: { $0 == identity.timestamp }) else { return }
        recorded.remove(at: index)
        entries[identity.key] = recorded.isEmpty ? nil : recorded
    }
}
