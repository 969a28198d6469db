import Composition
import Foundation
import LocalBackend
import SubscriberCore
import VortexVocabulary

/// The scripted "day in the life" of a Vortex user: every one of the nine event kinds, each event with a unique
/// timestamp so the drill can tell exactly which ones arrived where.
public enum DrillScript {
    /// The user the demo signs in (a member of `organization` with access to `deviceGroup` in the sample directory);
    /// the drill takes any identity (``DrillIdentity``).
    public static let user = DrillIdentity.sample.user
    /// The sample user's organization.
    public static let organization = DrillIdentity.sample.organization ?? "o-1"
    /// A device group the sample user may see.
    public static let deviceGroup = DrillIdentity.sample.deviceGroup ?? "g-1"

    /// The public streams each kind reaches (nine-method stream first, then the merged one when it differs).
    public static func streams(of kind: VortexEventKind) -> [String] {
        switch kind {
        case .devicePresence: ["devicePresence", "device"]
        case .deviceRecording: ["deviceRecording", "device"]
        case .deviceFirmware: ["deviceFirmware", "device"]
        case .archiveState: ["archive"]
        case .licensePhase: ["license", "organization"]
        case .plan: ["plan", "organization"]
        case .aiSettings: ["aiSettings", "organization"]
        case .roleChanged: ["role"]
        case .tokenRevoked: ["revoke"]
        }
    }

    /// The kinds of the story the drill can publish for `identity`: device and archive kinds need a device group and an
    /// organization, organization kinds an organization.
    public static func story(for identity: DrillIdentity) -> [VortexEventKind] {
        story.filter { kind in
            switch kind.audience {
            case .deviceGroup: identity.deviceGroup != nil && identity.organization != nil
            case .organization: identity.organization != nil
            case .user: true
            }
        }
    }

    /// The public streams (of ``allStreams``, in its order) that events of `kinds` reach.
    public static func streams(reachedBy kinds: [VortexEventKind]) -> [String] {
        let reached = Set(kinds.flatMap(streams(of:)))
        return allStreams.filter(reached.contains)
    }

    /// Every public stream, in a stable order.
    public static let allStreams = [
        "devicePresence", "deviceRecording", "deviceFirmware", "device", "archive", "license", "plan", "aiSettings",
        "organization", "role", "revoke",
    ]

    /// The kinds in the order of the story: a device goes offline and online, records, updates its firmware, an archive
    /// becomes ready, the licence phase, plan and AI settings change, the role changes, and finally the token is revoked.
    public static let story: [VortexEventKind] = [
        .devicePresence, .devicePresence, .deviceRecording, .deviceFirmware, .archiveState, .licensePhase, .plan, .aiSettings,
        .roleChanged, .tokenRevoked,
    ]

    /// The drill's own GraphQL operations (app-supplied, as `RealtimeConfiguration.graphQLOperations` allows): the
    /// documented fields plus the local backend's extensions `orgId`, `siteId`, `eventType` and `timestamp`, so
    /// every event is identified by its timestamp on both transports and the values compare field for field.
    /// `vortex-realtime preflight --config` checks such operations against a server before the drill relies on them.
    public static let graphQLOperations: [String: RealtimeConfiguration.GraphQLOperationConfiguration] = {
        let extensions = " eventType timestamp"
        let selections: [(String, String, String)] = [
            ("device", "subscribeDeviceState", "mac derivant online recording fwUpdateState thingName deviceGroupID orgId siteId"),
            (
                "archive", "subscribeArchiveState",
                "mac derivant thingName deviceGroupID orgId siteId status videoLength videoSize cloudSize hasH265 createdAt"
            ),
            (
                "organization", "subscribeOrganizationState",
                "orgId licensePhase isFreePlan AIControlSetting { uuid termsAgreement options }"
            ),
            ("role", "subscribeRoleChange", "reason"),
            ("revoke", "subscribeUserTokenRevoke", "userId revokedAt reason requestId"),
        ]
        var operations: [String: RealtimeConfiguration.GraphQLOperationConfiguration] = [:]
        for (upstream, field, selection) in selections {
            operations[upstream] = .init(query: "subscription { \(field) { \(selection)\(extensions) } }")
        }
        return operations
    }()

    /// Event number `index` of a sequence cycling through `kinds`, stamped `timestamp`, about `identity` (its
    /// organization, device group and user).
    public static func event(_ index: Int, kind: VortexEventKind, timestamp: String, identity: DrillIdentity = .sample) -> DomainEvent {
        let device: [String: JSONValue] = [
            "mac": .string("00:1A:2B:3C:4D:5E"), "derivant": .string("VX-100"), "thingName": .string("thing-7"),
        ]
        var payload: [String: JSONValue]
        switch kind {
        case .devicePresence: payload = device.merging(["online": .bool(index % 2 == 1)]) { $1 }
        case .deviceRecording: payload = device.merging(["recording": .bool(index % 3 != 0)]) { $1 }
        case .deviceFirmware: payload = device.merging(["fwUpdateState": .number(Double(index % 16 - 1))]) { $1 }
        case .archiveState:
            payload = device.merging([
                "status": .string("Ready"), "videoLength": .number(12.5), "videoSize": .number(1_048_576), "cloudSize": .number(524_288),
                "hasH265": .bool(true), "createdAt": .string(timestamp),
            ]) { $1 }
        case .licensePhase: payload = ["licensePhase": .string(["Valid", "NoticePeriod", "GracePeriod"][index % 3])]
        case .plan: payload = ["isFreePlan": .bool(index % 2 == 0)]
        case .aiSettings:
            payload = [
                "aiControlSetting": .object([
                    "uuid": .string("ai-\(index)"), "termsAgreement": .bool(true), "options": .object(["detectPeople": .bool(true)]),
                ])
            ]
        case .roleChanged: payload = ["reason": .string("role updated #\(index)")]
        case .tokenRevoked:
            payload = ["revokedAt": .string(timestamp), "reason": .string("PASSWORD_CHANGED"), "requestId": .string("req-\(index)")]
        }
        return DomainEvent(
            kind: kind, orgId: identity.organization,
            deviceGroupId: kind.audience == .deviceGroup ? identity.deviceGroup : nil,
            userId: kind.audience == .user ? identity.user : nil, payload: payload, timestamp: timestamp)
    }
}
