/// Something a ``TransportSession`` decided under its lock, done once the lock is released: yielding to a consumer,
/// waking or closing a link, scheduling a link timer, asking the supervisor, answering a publish.
package enum SessionEffect {
    case yield(SubscriptionSink, SubscriptionEvent)
    case finish(SubscriptionSink, RealtimeError?)
    case wake(LinkControl)
    case close(LinkControl, LinkEnd, String)
    /// A timer of the link with the session's token.
    case schedule(LinkControl, Duration, Int)
    case request(SupervisorRequest)
    case reply(OneShotSignal<Result<PublishResult, RealtimeError>>, Result<PublishResult, RealtimeError>)
}
