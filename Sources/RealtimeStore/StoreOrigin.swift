/// Where a value the store holds came from.
public enum StoreOrigin: String, Sendable, Equatable, Codable {
    /// Delivered by the notifier as it happened.
    case live
    /// Returned by the app's backfill for a window in which events may have been missed.
    case backfill
}
