/// The legacy merged organization event: the payload of the GraphQL subscription `subscribeOrganizationState`
/// and the value of the merged API's `organizationValues()`, on either transport.
///
/// The AI setting's key is `AIControlSetting` (as in seed 002's consumer example); decoding also accepts the new
/// schema's `aiControlSetting`, preferring `AIControlSetting` when both are present and non-null. Encoding writes
/// `AIControlSetting`. ``split()`` turns it into the nine-kind events; the `init(_:)` initializers turn a
/// nine-kind organization event back into this shape.
public struct OrganizationStateOutput: VortexEventPayload {
    /// The organization identifier.
    public var orgId: String?
    /// The licence phase; present on licence changes.
    public var licensePhase: LicensePhase?
    /// Whether the organization is on the free plan; present on plan changes.
    public var isFreePlan: Bool?
    /// The AI control setting; present on AI settings changes. JSON key `AIControlSetting` (or `aiControlSetting`).
    public var AIControlSetting: AIControlSetting?
    /// The event type (new schema), such as `organization/planChanged`; decides ``split()`` when present.
    public var eventType: String?
    /// When the event occurred, ISO 8601 (new schema).
    public var timestamp: String?

    /// Creates a payload.
    public init(
        orgId: String? = nil,
        licensePhase: LicensePhase? = nil,
        isFreePlan: Bool? = nil,
        AIControlSetting: AIControlSetting? = nil,
        eventType: String? = nil,
        timestamp: String? = nil
    ) {
        self.orgId = orgId
        self.licensePhase = licensePhase
        self.isFreePlan = isFreePlan
        self.AIControlSetting = AIControlSetting
        self.eventType = eventType
        self.timestamp = timestamp
    }

    /// The AI control setting under the new schema's camelCase name; the same value as `AIControlSetting`.
    public var aiControlSetting: AIControlSetting? {
        get { AIControlSetting }
        set { AIControlSetting = newValue }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case orgId, licensePhase, isFreePlan, AIControlSetting, eventType, timestamp
        case aiControlSetting
    }

    /// Every JSON key this model decodes (both spellings of the AI setting).
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))

    /// Decodes the payload, accepting `AIControlSetting` or `aiControlSetting`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        orgId = try container.decodeIfPresent(String.self, forKey: .orgId)
        licensePhase = try container.decodeIfPresent(LicensePhase.self, forKey: .licensePhase)
        isFreePlan = try container.decodeIfPresent(Bool.self, forKey: .isFreePlan)
        self.AIControlSetting =
            try container.decodeIfPresent(AIControlSettingModel.self, forKey: .AIControlSetting)
            ?? container.decodeIfPresent(AIControlSettingModel.self, forKey: .aiControlSetting)
        eventType = try container.decodeIfPresent(String.self, forKey: .eventType)
        timestamp = try container.decodeIfPresent(String.self, forKey: .timestamp)
    }

    /// Encodes the payload, writing the AI setting as `AIControlSetting`; `nil` fields are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(orgId, forKey: .orgId)
        try container.encodeIfPresent(licensePhase, forKey: .licensePhase)
        try container.encodeIfPresent(isFreePlan, forKey: .isFreePlan)
        try container.encodeIfPresent(AIControlSetting, forKey: .AIControlSetting)
        try container.encodeIfPresent(eventType, forKey: .eventType)
        try container.encodeIfPresent(timestamp, forKey: .timestamp)
    }
}

/// ``AIControlSetting`` under a name that the property `OrganizationStateOutput.AIControlSetting` does not
/// shadow inside expressions.
private typealias AIControlSettingModel = AIControlSetting

// MARK: - Merged → split

extension OrganizationStateOutput {
    /// The nine-kind events this merged payload stands for.
    ///
    /// - When `eventType` names an organization kind, exactly that one event (only that kind's field is carried).
    /// - Otherwise (no `eventType`, or one that is not an organization kind), one event per field present, in
    ///   this order: `licensePhase` → licence, `isFreePlan` → plan, `AIControlSetting` → AI settings.
    ///   No such field: `[]`.
    ///
    /// Every event carries `orgId` and `timestamp` over; its `eventType` is the payload's, or the kind's own
    /// ``VortexEventKind/eventType`` when the payload had none.
    public func split() -> [VortexEvent] {
        if let eventType, let kind = VortexEventKind(eventType: eventType) {
            switch kind {
            case .licensePhase: return [.licensePhase(license)]
            case .plan: return [.plan(plan)]
            case .aiSettings: return [.aiSettings(aiSettings)]
            default: break
            }
        }
        var events: [VortexEvent] = []
        if licensePhase != nil { events.append(.licensePhase(license)) }
        if isFreePlan != nil { events.append(.plan(plan)) }
        if AIControlSetting != nil { events.append(.aiSettings(aiSettings)) }
        return events
    }

    private var license: LicenseStateOutput {
        LicenseStateOutput(
            eventType: eventType ?? VortexEventKind.licensePhase.eventType, timestamp: timestamp, orgId: orgId,
            licensePhase: licensePhase)
    }

    private var plan: PlanStateOutput {
        PlanStateOutput(
            eventType: eventType ?? VortexEventKind.plan.eventType, timestamp: timestamp, orgId: orgId,
            isFreePlan: isFreePlan)
    }

    private var aiSettings: AISettingsOutput {
        AISettingsOutput(
            eventType: eventType ?? VortexEventKind.aiSettings.eventType, timestamp: timestamp, orgId: orgId,
            aiControlSetting: AIControlSetting)
    }
}

// MARK: - Split → merged

extension OrganizationStateOutput {
    /// The merged form of a licence event: `licensePhase` set, the other two `nil`.
    public init(_ license: LicenseStateOutput) {
        self.init(
            orgId: license.orgId, licensePhase: license.licensePhase, eventType: license.eventType,
            timestamp: license.timestamp)
    }

    /// The merged form of a plan event: `isFreePlan` set, the other two `nil`.
    public init(_ plan: PlanStateOutput) {
        self.init(orgId: plan.orgId, isFreePlan: plan.isFreePlan, eventType: plan.eventType, timestamp: plan.timestamp)
    }

    /// The merged form of an AI settings event: `AIControlSetting` set, the other two `nil`.
    public init(_ aiSettings: AISettingsOutput) {
        self.init(
            orgId: aiSettings.orgId, AIControlSetting: aiSettings.aiControlSetting, eventType: aiSettings.eventType,
            timestamp: aiSettings.timestamp)
    }

    /// The merged form of an organization event; `nil` for the other six kinds.
    public init?(_ event: VortexEvent) {
        switch event {
        case .licensePhase(let value): self.init(value)
        case .plan(let value): self.init(value)
        case .aiSettings(let value): self.init(value)
        default: return nil
        }
    }
}
