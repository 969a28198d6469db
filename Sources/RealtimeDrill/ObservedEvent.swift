import BackendNotifier
import Foundation
import SubscriberCore

/// One value a notifier delivered on one of its nine streams, normalised for matching across transports: its stream
/// (the kind), the entity it is about, its fields, its own timestamp and when it arrived.
///
/// - **Entity:** device kinds and archives by `thingName` (else `mac`); organization kinds by `orgId` (else the
///   signed-in organization: the default legacy documents do not select it); role changes by the signed-in user;
///   token revocations by their `userId`.
/// - **Fields:** every member of the public model but `timestamp` (judged with a tolerance instead). The metadata
///   ``optionalFields`` (`eventType`, `orgId`, `siteId`, `deviceGroupID`) are compared only when both sides carry them:
///   the legacy documents do not select them, and their absence is not a difference in what the app is told.
public struct ObservedEvent: Sendable, Codable, Equatable {
    /// The nine streams, in the order of the notifier's nine-method API.
    public static let streams = [
        "devicePresence", "deviceRecording", "deviceFirmware", "archive", "license", "plan", "aiSettings", "role", "revoke",
    ]

    /// Members compared only when both sides carry them.
    public static let optionalFields: Set<String> = Set([DeviceKey.eventType, .orgId, .siteId, .deviceGroupID].map(\.rawValue))

    /// The stream (`devicePresence`, …, `revoke`): the kind.
    public var stream: String
    /// The entity it is about: `device:<thingName or mac>`, `organization:<orgId>`, `user:<id>`.
    public var entity: String
    /// The event's own `timestamp` as sent, if any.
    public var timestamp: String?
    /// When it arrived.
    public var arrivedAt: Date
    /// The value as the notifier delivered it.
    public var value: JSONValue
    /// ``timestamp`` parsed.
    public var date: Date? { ISO8601Timestamp.date(from: timestamp) }
    /// When it arrived (ISO 8601, as the reports write it).
    public var arrived: String { WindowFigure.stamp(arrivedAt) }
    /// The instant windows are judged by: the backend's timestamp when it has one (the gap rule's margin covers clock
    /// skew between backend and device), else the arrival.
    public var instant: Date { date ?? arrivedAt }

    /// The members compared for equality (everything but `timestamp`).
    public var fields: [String: JSONValue] {
        guard case .object(var members) = value else { return [:] }
        members["timestamp"] = nil
        return members.filter { $0.value != .null }
    }

    /// Creates an event directly (tests, and ``init(stream:json:arrivedAt:userId:organizationId:)``).
    public init(stream: String, entity: String, timestamp: String?, arrivedAt: Date, value: JSONValue) {
        self.stream = stream
        self.entity = entity
        self.timestamp = timestamp
        self.arrivedAt = arrivedAt
        self.value = value
    }

    private enum CodingKeys: String, CodingKey { case stream, entity, timestamp, arrived, value }

    /// Reads an event back.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stream = try container.decode(String.self, forKey: .stream)
        entity = try container.decode(String.self, forKey: .entity)
        timestamp = try container.decodeIfPresent(String.self, forKey: .timestamp)
        arrivedAt = ISO8601Timestamp.date(from: try container.decode(String.self, forKey: .arrived)) ?? .distantPast
        value = try container.decode(JSONValue.self, forKey: .value)
    }

    /// Writes the event, its arrival as ISO 8601.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stream, forKey: .stream)
        try container.encode(entity, forKey: .entity)
        try container.encodeIfPresent(timestamp, forKey: .timestamp)
        try container.encode(arrived, forKey: .arrived)
        try container.encode(value, forKey: .value)
    }

    /// Normalises one value of a nine-method stream, encoded as JSON (`nil` for other streams or unreadable JSON).
    public init?(stream: String, json: String, arrivedAt: Date, userId: String, organizationId: String?) {
        guard Self.streams.contains(stream),
            let value = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)), case .object = value
        else { return nil }
        let entity: String
        switch stream {
        case "devicePresence", "deviceRecording", "deviceFirmware", "archive":
            entity = "device:" + (value["thingName"]?.stringValue ?? value["mac"]?.stringValue ?? "?")
        case "license", "plan", "aiSettings":
            entity = "organization:" + (value["orgId"]?.stringValue ?? organizationId ?? "?")
        case "revoke":
            entity = "user:" + (value["userId"]?.stringValue ?? userId)
        default:
            entity = "user:" + userId
        }
        self.init(stream: stream, entity: entity, timestamp: value["timestamp"]?.stringValue, arrivedAt: arrivedAt, value: value)
    }

    /// The upstream subscription that carries `stream` (`device`, `archive`, `organization`, `role`, `revoke`).
    public static func upstream(of stream: String) -> String {
        switch stream {
        case "devicePresence", "deviceRecording", "deviceFirmware": "device"
        case "license", "plan", "aiSettings": "organization"
        default: stream
        }
    }

    /// The members whose values differ from `other`'s (an optional member missing on one side is no difference).
    public func differingFields(from other: ObservedEvent) -> [String] {
        let mine = fields
        let theirs = other.fields
        return Set(mine.keys).union(theirs.keys).filter { key in
            switch (mine[key], theirs[key]) {
            case (let left?, let right?): left != right
            case (nil, nil): false
            default: !Self.optionalFields.contains(key)
            }
        }.sorted()
    }

    /// Seconds between this event and `other`: their timestamps when both have one, else their arrivals.
    public func distance(to other: ObservedEvent) -> TimeInterval {
        if let mine = date, let theirs = other.date { return abs(mine.timeIntervalSince(theirs)) }
        return abs(arrivedAt.timeIntervalSince(other.arrivedAt))
    }

    /// One line: `plan organization:o-1 @2025-…Z {"isFreePlan":true,…}`.
    public var summary: String {
        let json = (try? SortedJSON.text(value)) ?? "{}"
        return "\(stream) \(entity) @\(timestamp ?? "arrived " + arrived) \(json)"
    }
}
