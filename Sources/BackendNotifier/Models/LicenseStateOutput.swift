/// An organization's licence phase changed (`organization/licensePhaseChanged`).
///
/// Published on `vortex-app/user/{userId}/organization/licensePhaseChanged` with `eventType` `organization/licensePhaseChanged`.
public struct LicenseStateOutput: VortexEventPayload {
    /// The event type, `organization/licensePhaseChanged`; `nil` when the payload had none (legacy GraphQL payloads).
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// The organization identifier.
    public var orgId: String?
    /// The new licence phase; unknown values decode as `LicensePhase.unknown(_:)`.
    public var licensePhase: LicensePhase?

    /// Creates a payload.
    public init(eventType: String? = nil, timestamp: String? = nil, orgId: String? = nil, licensePhase: LicensePhase? = nil) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.licensePhase = licensePhase
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, licensePhase
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}
