/// An organization's AI settings changed (`organization/aiSettingsChanged`).
///
/// Published on `vortex-app/user/{userId}/organization/aiSettingsChanged` with `eventType` `organization/aiSettingsChanged`.
public struct AISettingsOutput: VortexEventPayload {
    /// The event type, `organization/aiSettingsChanged`; `nil` when the payload had none (legacy GraphQL payloads).
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// The organization identifier.
    public var orgId: String?
    /// The new AI control setting; note the camelCase key `aiControlSetting` (the legacy merged output spells it `AIControlSetting`).
    public var aiControlSetting: AIControlSetting?

    /// Creates a payload.
    public init(eventType: String? = nil, timestamp: String? = nil, orgId: String? = nil, aiControlSetting: AIControlSetting? = nil) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.aiControlSetting = aiControlSetting
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, aiControlSetting
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}
