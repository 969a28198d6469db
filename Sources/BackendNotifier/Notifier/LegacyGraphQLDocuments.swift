import SubscriberCore

/// The five legacy subscriptions, selecting every field of `docs/legacy-schema.graphql`.
enum LegacyGraphQLDocuments {
    private static let deviceFields = "mac derivant online recording fwUpdateState thingName deviceGroupID orgId siteId eventType timestamp"
    private static let archiveFields =
        "mac derivant thingName deviceGroupID orgId siteId status videoLength videoSize cloudSize hasH265 createdAt eventType timestamp"
    private static let organizationFields =
        "orgId licensePhase isFreePlan AIControlSetting { uuid termsAgreement options } eventType timestamp"

    static func operation(for upstream: Upstream, argument: String) -> GraphQLOperation {
        let (name, field, parameter, selection): (String, String, String, String) =
            switch upstream {
            case .device: ("DeviceState", "subscribeDeviceState", "orgId", deviceFields)
            case .archive: ("ArchiveState", "subscribeArchiveState", "orgId", archiveFields)
            case .organization: ("OrganizationState", "subscribeOrganizationState", "orgId", organizationFields)
            case .role: ("RoleChange", "subscribeRoleChange", "userId", "reason eventType timestamp")
            case .revoke: ("UserTokenRevoke", "subscribeUserTokenRevoke", "userId", "userId revokedAt reason requestId eventType timestamp")
            }
        return GraphQLOperation(
            query: "subscription \(name)($\(parameter): String!) { \(field)(\(parameter): $\(parameter)) { \(selection) } }",
            operationName: name,
            variablesJSON: JSONString.sortedStringObject([parameter: argument]))
    }
}
