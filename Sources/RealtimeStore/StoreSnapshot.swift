import BackendNotifier

/// The whole state the store holds for one identity, as a value.
public struct StoreSnapshot: Sendable, Equatable {
    /// Devices by thing name.
    public var devices: [String: DeviceState] = [:]
    /// The organization's licence, plan and AI settings.
    public var organization = OrganizationState()
    /// The newest role change of the user.
    public var roleChange: StoreValue<RoleChangeOutput>?
    /// The newest token revocation of the user.
    public var tokenRevocation: StoreValue<UserTokenRevokeOutput>?

    /// An empty state (a new identity starts here).
    public init() {}
}
