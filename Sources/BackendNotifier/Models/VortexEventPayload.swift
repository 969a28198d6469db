import Foundation

/// What every event payload model has in common: the `eventType` and `timestamp` metadata and the list of
/// JSON keys it knows.
///
/// The new schema requires `eventType` and `timestamp`; they are optional here because legacy GraphQL payloads
/// lack them. ``VortexEventDecoder`` enforces them where the protocol requires them (AppSync Events).
public protocol VortexEventPayload: Sendable, Codable, Equatable {
    /// The event type identifier used for routing, such as `device/presenceChanged`; `nil` on legacy payloads.
    var eventType: String? { get }
    /// When the event occurred, ISO 8601 text as sent; `nil` on legacy payloads. See ``date``.
    var timestamp: String? { get }
    /// Every JSON key this model decodes; other keys are ignored (and reported by
    /// ``VortexEventDecoder/unknownFields(in:as:)``).
    static var knownFields: Set<String> { get }
    /// The model's name as the documents and decoding errors spell it, such as `DevicePresenceOutput`; the type's
    /// name unless the model says otherwise.
    static var modelName: String { get }
}

extension VortexEventPayload {
    /// The type's name.
    public static var modelName: String { String(describing: Self.self) }

    /// ``timestamp`` parsed as ISO 8601 (with or without fractional seconds); `nil` when absent or unparsable.
    public var date: Date? { ISO8601Timestamp.date(from: timestamp) }
}
