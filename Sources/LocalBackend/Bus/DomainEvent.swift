import Foundation
import SubscriberCore
import VortexVocabulary

/// One backend domain event, as posted to `POST /vortex/events` or ``EventBus/publish(_:)``:
///
/// ```json
/// {"kind":"devicePresence","orgId":"o-1","deviceGroupId":"g-1","payload":{"thingName":"cam-1","online":true}}
/// ```
///
/// `deviceGroupId` is required for device and archive kinds, `userId` for `roleChanged` and `tokenRevoked`, `orgId`
/// for every kind but those two.
public struct DomainEvent: Sendable, Codable, Equatable {
    /// What happened.
    public var kind: VortexEventKind
    /// The organization it happened in.
    public var orgId: String?
    /// The device group (site) of a device or archive event; published as `siteId`.
    public var deviceGroupId: String?
    /// The user a `roleChanged` or `tokenRevoked` event is about.
    public var userId: String?
    /// The event-specific fields (`online`, `licensePhase`, `reason`, …), copied into the published event.
    public var payload: [String: JSONValue]
    /// ISO 8601 time of the event; the bus stamps the current time (millisecond precision) when absent.
    public var timestamp: String?

    /// Creates an event.
    public init(
        kind: VortexEventKind, orgId: String? = nil, deviceGroupId: String? = nil, userId: String? = nil,
        payload: [String: JSONValue] = [:], timestamp: String? = nil
    ) {
        self.kind = kind
        self.orgId = orgId
        self.deviceGroupId = deviceGroupId
        self.userId = userId
        self.payload = payload
        self.timestamp = timestamp
    }

    private enum CodingKeys: String, CodingKey { case kind, orgId, deviceGroupId, userId, payload, timestamp }

    /// Decodes an event; `payload` may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(VortexEventKind.self, forKey: .kind)
        orgId = try container.decodeIfPresent(String.self, forKey: .orgId)
        deviceGroupId = try container.decodeIfPresent(String.self, forKey: .deviceGroupId)
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        payload = try container.decodeIfPresent([String: JSONValue].self, forKey: .payload) ?? [:]
        timestamp = try container.decodeIfPresent(String.self, forKey: .timestamp)
    }

    /// Throws ``DomainEventError`` when a field the kind needs is missing or empty.
    public func validate() throws(DomainEventError) {
        func require(_ value: String?, _ name: String) throws(DomainEventError) {
            guard let value, !value.isEmpty else { throw .missingField(name, kind: kind) }
        }
        switch kind.audience {
        case .deviceGroup:
            try require(orgId, "orgId")
            try require(deviceGroupId, "deviceGroupId")
        case .organization:
            try require(orgId, "orgId")
        case .user:
            try require(userId, "userId")
        }
    }

    /// Fields the bus writes itself; a payload cannot override them.
    static let reservedFields: Set<String> = Set([DeviceKey.eventType, .timestamp, .orgId, .siteId].map(\.rawValue) + ["userId"])

    /// The event as published on the user channels: `eventType`, `timestamp`, `orgId`, `siteId` (device and archive
    /// kinds), `userId` (user kinds), then the payload fields in key order. A `tokenRevoked` event without
    /// `revokedAt` gets the timestamp.
    func publishedJSON(timestamp: String) -> String {
        JSONString.object(publishedMembers(timestamp: timestamp).map { (key: $0.key, json: $0.value.jsonText) })
    }

    /// The members of ``publishedJSON(timestamp:)``, in its order (the legacy GraphQL side reads the same values).
    func publishedMembers(timestamp: String) -> [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = [
            (key: DeviceKey.eventType.rawValue, value: .string(kind.eventType)),
            (key: DeviceKey.timestamp.rawValue, value: .string(timestamp)),
        ]
        if let orgId { members.append((key: DeviceKey.orgId.rawValue, value: .string(orgId))) }
        if kind.audience == .deviceGroup, let deviceGroupId {
            members.append((key: DeviceKey.siteId.rawValue, value: .string(deviceGroupId)))
        }
        if kind.audience == .user, let userId { members.append((key: "userId", value: .string(userId))) }
        var fields = payload.filter { !Self.reservedFields.contains($0.key) }
        if kind == .tokenRevoked, fields["revokedAt"] == nil { fields["revokedAt"] = .string(timestamp) }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            members.append((key: key, value: value))
        }
        return members
    }

    /// `date` as ISO 8601 UTC with milliseconds, for example `2025-01-31T09:15:02.125Z`.
    static func timestampText(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// Why a ``DomainEvent`` was refused.
public enum DomainEventError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A field the kind needs is missing.
    case missingField(String, kind: VortexEventKind)

    /// A readable description.
    public var description: String {
        switch self {
        case .missingField(let field, let kind): "\(kind.rawValue) events need \"\(field)\""
        }
    }
}
