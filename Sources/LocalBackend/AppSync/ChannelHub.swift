import AppSyncEventsWire

/// Every AppSync subscription of every connection, and the fan-out of published events to them.
actor ChannelHub {
    /// What ``subscribe(_:id:pattern:)`` did.
    enum SubscribeOutcome: Sendable, Equatable {
        case added
        case duplicateID
        case limitReached
        case unknownConnection
    }

    private struct Member {
        let outbox: WebSocketOutbox
        var subscriptions: [String: String] = [:]
    }

    /// Subscriptions one connection may hold (the service's limit).
    let limit: Int
    private var members: [UInt64: Member] = [:]

    init(limit: Int = AppSyncConnectionLimits.maxSubscriptions) { self.limit = limit }

    func attach(_ connection: UInt64, outbox: WebSocketOutbox) {
        members[connection] = Member(outbox: outbox)
    }

    func detach(_ connection: UInt64) {
        members[connection] = nil
    }

    /// Adds subscription `id` (unique per connection) for `pattern` (a validated channel, maybe ending in `/*`).
    func subscribe(_ connection: UInt64, id: String, pattern: String) -> SubscribeOutcome {
        guard var member = members[connection] else { return .unknownConnection }
        guard member.subscriptions[id] == nil else { return .duplicateID }
        guard member.subscriptions.count < limit else { return .limitReached }
        member.subscriptions[id] = pattern
        members[connection] = member
        return .added
    }

    /// Removes subscription `id`; `false` when the connection has none with that id.
    func unsubscribe(_ connection: UInt64, id: String) -> Bool {
        members[connection]?.subscriptions.removeValue(forKey: id) != nil
    }

    /// Queues one `data` message per event for every subscription matching `channel`; returns how many.
    func publish(channel: String, events: [String]) -> Int {
        var frames = 0
        for event in events {
            for member in members.values {
                for (id, pattern) in member.subscriptions where ChannelAccess.matches(pattern: pattern, channel: channel) {
                    member.outbox.send(AppSyncServerMessage.data(id: id, event: event), isData: true)
                    frames += 1
                }
            }
        }
        return frames
    }

    /// The number of subscriptions across every connection.
    var subscriptionCount: Int { members.values.reduce(0) { $0 + $1.subscriptions.count } }
}
