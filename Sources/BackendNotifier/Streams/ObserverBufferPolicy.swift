/// How much each observer of a notifier stream may fall behind, and what is dropped when it does.
///
/// Drops are never silent: each one is counted (``BackendNotifier/statistics()``, metric
/// `vortex_realtime_buffer_drops_total`), logged, and reported on ``BackendNotifier/connectionEvents()`` as
/// ``NotifierConnectionEvent/eventsLost(stream:transport:loss:)`` with reason `bufferOverflow`, over a window that
/// covers the dropped values: from the loss margin before the drop for ``Overflow/dropNewest``, from the loss margin
/// before the observer last took its buffer (every value dropped was queued after it) for ``Overflow/dropOldest``.
/// Default limit: 1024.
public struct ObserverBufferPolicy: Sendable, Equatable {
    /// What goes when the buffer is full.
    public enum Overflow: String, Sendable, Equatable, CaseIterable {
        /// Keep the newest values (state streams: the latest state matters most).
        case dropOldest
        /// Keep the oldest values.
        case dropNewest
    }

    /// Values buffered per observer.
    public var limit: Int
    /// What is dropped when the buffer is full.
    public var overflow: Overflow

    /// Creates a policy.
    public init(limit: Int = 1024, overflow: Overflow = .dropOldest) {
        self.limit = max(1, limit)
        self.overflow = overflow
    }
}
