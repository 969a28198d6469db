import SubscriberCore

/// One upstream subscription of the notifier. Five of them carry the nine event kinds on either transport:
///
/// | upstream | AppSync Events channel | GraphQL subscription | feeds |
/// |---|---|---|---|
/// | device | `vortex-app/user/{userId}/device/*` | `subscribeDeviceState(orgId:)` | presence, recording, firmware; `deviceValues()` |
/// | organization | `vortex-app/user/{userId}/organization/*` | `subscribeOrganizationState(orgId:)` | licence, plan, AI settings; `organizationValues()` |
/// | archive | `vortex-app/user/{userId}/archive/stateChanged` | `subscribeArchiveState(orgId:)` | `archiveValues()` |
/// | role | `vortex-app/user/{userId}/roleChanged` | `subscribeRoleChange(userId:)` | `roleValues()` |
/// | revoke | `vortex-app/user/{userId}/tokenRevoked` | `subscribeUserTokenRevoke(userId:)` | `revokeValues()` |
enum Upstream: String, CaseIterable, Sendable {
    case device, organization, archive, role, revoke

    /// The subscription for `dialect` and the signed-in identity; `nil` when the identity lacks what it needs
    /// (no user, or no organization for the organization-scoped GraphQL subscriptions).
    func request(dialect: TransportDialect, userId: String?, organizationId: String?, namespace: String) -> SubscriptionRequest? {
        guard let userId else { return nil }
        switch dialect {
        case .appSyncChannels:
            let base = "\(namespace)/user/\(userId)/"
            switch self {
            case .device: return .channel(base + "device/*")
            case .organization: return .channel(base + "organization/*")
            case .archive: return .channel(base + "archive/stateChanged")
            case .role: return .channel(base + "roleChanged")
            case .revoke: return .channel(base + "tokenRevoked")
            }
        case .graphQL:
            switch self {
            case .device, .organization, .archive:
                guard let organizationId else { return nil }
                return .graphQL(LegacyGraphQLDocuments.operation(for: self, argument: organizationId))
            case .role, .revoke:
                return .graphQL(LegacyGraphQLDocuments.operation(for: self, argument: userId))
            }
        }
    }
}
