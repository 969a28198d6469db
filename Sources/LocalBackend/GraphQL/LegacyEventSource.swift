import Foundation
import GraphQL
import SubscriberCore
import VortexVocabulary

/// One domain event as the legacy GraphQL side delivers it: the root value of one subscription execution, whose
/// ``fields`` GraphQLSwift's default resolver reads by field name.
///
/// Parity with the AppSync side is by construction: the fields are the very members of the JSON object the bus publishes
/// on `vortex-app/user/{userId}/…` (``DomainEvent/publishedMembers(timestamp:)`` with the event's final timestamp), so
/// `eventType`, `timestamp`, `orgId`, `siteId`, `userId`, `revokedAt` and the payload fields are the same values. Then
/// the legacy shape is applied:
/// - `deviceGroupID` (device and archive outputs) is the event's device group, like `siteId`;
/// - the merged outputs carry only their kind's field: a presence event sets `online` and leaves `recording` and
///   `fwUpdateState` null (likewise `licensePhase` / `isFreePlan` / `AIControlSetting` for organization events);
/// - the AppSync `aiControlSetting` object is the GraphQL `AIControlSetting` field.
struct LegacyEventSource: Sendable {
    /// The merged output's fields by GraphQL field name: values as GraphQLSwift `Map`s (what its scalar serializers
    /// read), `AIControlSetting` as a nested field dictionary. Absent fields resolve to null.
    let fields: [String: any Sendable]

    /// The field each merged kind sets, and no other kind of the same output does.
    static let kindFields: [VortexEventKind: String] = [
        .devicePresence: DeviceKey.online.rawValue, .deviceRecording: DeviceKey.recording.rawValue,
        .deviceFirmware: DeviceKey.fwUpdateState.rawValue,
        .licensePhase: "licensePhase", .plan: "isFreePlan", .aiSettings: "AIControlSetting",
    ]

    init(_ event: DomainEvent) {
        let timestamp = event.timestamp ?? DomainEvent.timestampText(Date())
        var values = [String: JSONValue](
            event.publishedMembers(timestamp: timestamp).map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        if event.kind == .aiSettings, let setting = values.removeValue(forKey: "aiControlSetting") {
            values["AIControlSetting"] = setting
        }
        let topic = LegacyTopic(kind: event.kind)
        for (kind, field) in Self.kindFields where kind != event.kind && LegacyTopic(kind: kind) == topic {
            values.removeValue(forKey: field)
        }
        if event.kind.audience == .deviceGroup, let group = event.deviceGroupId {
            values[DeviceKey.deviceGroupID.rawValue] = .string(group)
        }
        var fields: [String: any Sendable] = [:]
        for (key, value) in values {
            if key == "AIControlSetting" {
                guard case .object(let members) = value else { continue }
                fields[key] = members.mapValues(\.graphQLMap) as [String: any Sendable]
            } else {
                fields[key] = value.graphQLMap
            }
        }
        self.fields = fields
    }
}

extension JSONValue {
    /// The same value as a GraphQLSwift `Map` (object keys sorted, as ``jsonText`` renders them; an integral number as
    /// an integer, as JSON text gives it).
    var graphQLMap: Map {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(let value): .number(Int(exactly: value).map { Number($0) } ?? Number(value))
        case .string(let value): .string(value)
        case .array(let values): .array(values.map(\.graphQLMap))
        case .object(let members):
            members.sorted { $0.key < $1.key }.reduce(into: [:] as Map) { result, member in
                try? result.set(member.value.graphQLMap, for: member.key)
            }
        }
    }
}
