import BackendNotifier

/// What the store knows about the signed-in user's organization: its newest licence, plan and AI settings events.
public struct OrganizationState: Sendable, Equatable {
    /// The newest `organization/licensePhaseChanged`.
    public var license: StoreValue<LicenseStateOutput>?
    /// The newest `organization/planChanged`.
    public var plan: StoreValue<PlanStateOutput>?
    /// The newest `organization/aiSettingsChanged`.
    public var aiSettings: StoreValue<AISettingsOutput>?

    /// An empty organization.
    public init() {}
}
