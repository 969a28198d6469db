import Foundation

/// One value of the store: the newest event of its kind for its entity, with when it happened and where it came from.
public struct StoreValue<Payload: Sendable & Equatable>: Sendable, Equatable {
    /// The event as delivered.
    public let payload: Payload
    /// When it happened (its `timestamp`); `nil` when it carried none.
    public let instant: Date?
    /// Live or backfilled.
    public let origin: StoreOrigin

    /// Creates a value.
    public init(payload: Payload, instant: Date?, origin: StoreOrigin) {
        self.payload = payload
        self.instant = instant
        self.origin = origin
    }
}
