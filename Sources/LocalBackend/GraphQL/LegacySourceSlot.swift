import SubscriberCore

/// Where an accepted subscription's events come from: the topic and argument its `subscribe` resolver settled on.
///
/// GraphQLSwift runs the resolver (argument coercion, the permission check) while it accepts the operation; the
/// resolver records its decision here, and the connection opens the event source and maps its events itself
/// (``LegacyResponseMapper``).
final class LegacySourceSlot: Sendable {
    /// A recorded decision.
    struct Resolution: Sendable, Equatable {
        let topic: LegacyTopic
        let argument: String
    }

    private let resolution = Locked<Resolution?>(nil)

    /// Records the resolver's decision (the last one wins; a subscription resolves one field).
    func record(_ topic: LegacyTopic, argument: String) {
        resolution.withLock { $0 = Resolution(topic: topic, argument: argument) }
    }

    /// The recorded decision, `nil` while the resolver has not run or refused.
    var recorded: Resolution? { resolution.withLock { $0 } }
}
