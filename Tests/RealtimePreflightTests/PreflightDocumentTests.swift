import BackendNotifier
import Foundation
import SubscriberCore
import Testing

@testable import RealtimePreflight

/// The documents the notifier sends on GraphQL, checked against a schema the way `vortex-realtime preflight` does.
@Suite("Preflight document checks")
struct PreflightDocumentTests {
    /// The legacy schema exactly as the documents define it: no arguments, no AppSync-era fields.
    static let documented = IntrospectedSchema(
        subscriptionType: "Subscription",
        types: [
            "Subscription": [
                "subscribeDeviceState": .init(name: "subscribeDeviceState", arguments: [:], type: "DeviceStateOutput"),
                "subscribeArchiveState": .init(name: "subscribeArchiveState", arguments: [:], type: "ArchiveStateOutput"),
                "subscribeOrganizationState": .init(name: "subscribeOrganizationState", arguments: [:], type: "OrganizationStateOutput"),
                "subscribeRoleChange": .init(name: "subscribeRoleChange", arguments: [:], type: "RoleChangeOutput"),
                "subscribeUserTokenRevoke": .init(name: "subscribeUserTokenRevoke", arguments: [:], type: "UserTokenRevokeOutput"),
            ],
            "DeviceStateOutput": leaves("mac derivant online recording fwUpdateState thingName deviceGroupID"),
            "ArchiveStateOutput": leaves("mac derivant thingName status videoLength videoSize cloudSize hasH265 createdAt"),
            "OrganizationStateOutput": leaves("licensePhase isFreePlan").merging(
                ["AIControlSetting": .init(name: "AIControlSetting", arguments: [:], type: "AIControlSetting")]) { $1 },
            "AIControlSetting": leaves("uuid termsAgreement options"),
            "RoleChangeOutput": leaves("reason"),
            "UserTokenRevokeOutput": leaves("userId revokedAt reason requestId"),
        ])

    static func leaves(_ names: String) -> [String: IntrospectedSchema.Field] {
        Dictionary(
            uniqueKeysWithValues: names.split(separator: " ").map {
                (String($0), IntrospectedSchema.Field(name: String($0), arguments: [:], type: "String"))
            })
    }

    @Test("every default document checks out against the documented legacy schema", arguments: NotifierUpstream.allCases)
    func defaultDocuments(upstream: NotifierUpstream) {
        #expect(Self.documented.problems(of: LegacyGraphQLDocuments.operation(for: upstream).query) == [])
    }

    @Test("the old guessed selection is named field by field, with its argument")
    func guessedSelection() {
        let query =
            "subscription DeviceState($orgId: String!) { subscribeDeviceState(orgId: $orgId) { mac online orgId siteId eventType timestamp } }"
        #expect(
            Self.documented.problems(of: query) == [
                "missing argument: Subscription.subscribeDeviceState(orgId:)",
                "missing field: DeviceStateOutput.orgId", "missing field: DeviceStateOutput.siteId",
                "missing field: DeviceStateOutput.eventType", "missing field: DeviceStateOutput.timestamp",
            ])
        #expect(
            Self.documented.problems(of: "subscription { subscribeWeather { rain } }") == [
                "missing operation: Subscription.subscribeWeather"
            ])
        #expect(
            Self.documented.problems(of: "subscription { subscribeOrganizationState { AIControlSetting { uuid colour } } }")
                == ["missing field: AIControlSetting.colour"])
    }

    @Test("a required argument the document does not pass is named")
    func requiredArgument() {
        var schema = Self.documented
        schema.types["Subscription"]?["subscribeRoleChange"] = .init(
            name: "subscribeRoleChange", arguments: ["userId": true], type: "RoleChangeOutput")
        #expect(
            schema.problems(of: "subscription { subscribeRoleChange { reason } }") == [
                "required argument not given: Subscription.subscribeRoleChange(userId:)"
            ])
        #expect(schema.problems(of: "subscription R($userId: String!) { subscribeRoleChange(userId: $userId) { reason } }") == [])
    }
}
