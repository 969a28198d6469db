import BackendNotifier

/// The whole state the store holds for one identity, as a value (the ledger's; the store publishes its parts).
struct StoreSnapshot: Sendable, Equatable {
    /// Devices by thing name.
    var devices: [String: DeviceState] = [:]
    /// The organization's licence, plan and AI settings.
    var organization = OrganizationState()
    /// The newest role change of the user.
    var roleChange: StoreValue<RoleChangeOutput>?
    /// The newest token revocation of the user.
    var tokenRevocation: StoreValue<UserTokenRevokeOutput>?

    /// An empty state (a new identity starts here).
    init() {}
}
