/// The user's role changed (`user/roleChanged`).
///
/// Published on `vortex-app/user/{userId}/roleChanged`; also the payload of the legacy GraphQL subscription
/// `subscribeRoleChange`, so both APIs use this type.
public struct RoleChangeOutput: VortexEventPayload {
    /// The event type, `user/roleChanged`; `nil` on legacy GraphQL payloads.
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// Why the role changed, free text.
    public var reason: String?

    /// Creates a payload.
    public init(eventType: String? = nil, timestamp: String? = nil, reason: String? = nil) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, reason
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}
