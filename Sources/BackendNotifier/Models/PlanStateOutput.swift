/// An organization's plan changed (`organization/planChanged`).
///
/// Published on `vortex-app/user/{userId}/organization/planChanged` with `eventType` `organization/planChanged`.
public struct PlanStateOutput: VortexEventPayload {
    /// The event type, `organization/planChanged`; `nil` when the payload had none (legacy GraphQL payloads).
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// The organization identifier.
    public var orgId: String?
    /// Whether the organization is on the free plan.
    public var isFreePlan: Bool?

    /// Creates a payload.
    public init(eventType: String? = nil, timestamp: String? = nil, orgId: String? = nil, isFreePlan: Bool? = nil) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.isFreePlan = isFreePlan
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, isFreePlan
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}
