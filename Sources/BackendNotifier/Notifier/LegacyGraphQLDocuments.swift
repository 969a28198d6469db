import SubscriberCore

/// The default documents of the five legacy subscriptions. Each selects only the fields the requirement documents
/// define for its output, and passes no arguments (the documents give none: the legacy server scopes subscriptions
/// by the connection's user):
///
/// | output | fields (source) |
/// |---|---|
/// | `DeviceStateOutput` | `mac derivant online recording fwUpdateState thingName deviceGroupID` (seed 000) |
/// | `OrganizationStateOutput` | `licensePhase isFreePlan AIControlSetting { uuid termsAgreement options }` (seed 001's "before" code; the setting's fields from the OpenAPI list) |
/// | `ArchiveStateOutput` | `mac derivant thingName status videoLength videoSize cloudSize hasH265 createdAt` (seed 001's archive fields, without the AppSync-era `orgId`, `siteId`, `eventType`, `timestamp`) |
/// | `RoleChangeOutput` | `reason` (seed 001) |
/// | `UserTokenRevokeOutput` | `userId revokedAt reason requestId` (seed 001) |
///
/// A server whose schema differs gets the app's own operations (``NotifierConfiguration/graphQLOperations``);
/// `vortex-realtime preflight` checks either against the server's schema.
public enum LegacyGraphQLDocuments {
    /// The subscription field of each upstream.
    public static func field(for upstream: NotifierUpstream) -> String {
        switch upstream {
        case .device: "subscribeDeviceState"
        case .archive: "subscribeArchiveState"
        case .organization: "subscribeOrganizationState"
        case .role: "subscribeRoleChange"
        case .revoke: "subscribeUserTokenRevoke"
        }
    }

    /// The documented selection of each upstream's output.
    public static func selection(for upstream: NotifierUpstream) -> String {
        switch upstream {
        case .device: "mac derivant online recording fwUpdateState thingName deviceGroupID"
        case .archive: "mac derivant thingName status videoLength videoSize cloudSize hasH265 createdAt"
        case .organization: "licensePhase isFreePlan AIControlSetting { uuid termsAgreement options }"
        case .role: "reason"
        case .revoke: "userId revokedAt reason requestId"
        }
    }

    /// The default operation of `upstream`.
    public static func operation(for upstream: NotifierUpstream) -> GraphQLOperation {
        GraphQLOperation(query: "subscription { \(field(for: upstream)) { \(selection(for: upstream)) } }")
    }
}
