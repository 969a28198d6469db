import BackendNotifier

/// Why one of the store's value streams ended.
public enum RealtimeStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reader of ``RealtimeStore/values(_:)`` for `kind` did not keep up: its buffer of `limit` values was full, so
    /// the stream ended after them instead of dropping values silently. Everything after them is missing from that
    /// stream; the store's own state (``RealtimeStore/devices`` and the others) has it. Observe the stream again.
    case readerFellBehind(kind: VortexEventKind, limit: Int)

    /// A sentence for a log line.
    public var description: String {
        switch self {
        case .readerFellBehind(let kind, let limit):
            "the reader of \(kind.rawValue) values fell behind: its \(limit) buffered values were delivered, later ones were not"
        }
    }
}
