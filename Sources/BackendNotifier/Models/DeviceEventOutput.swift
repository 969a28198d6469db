/// A device event of the nine-kind API: the eight fields every device event carries and the one that tells the kind
/// (``DeviceEventField``). Apps use it through its three names, ``DevicePresenceOutput``, ``DeviceRecordingOutput`` and
/// ``DeviceFirmwareOutput``, which add the field's own property (`online`, `recording`, `fwUpdateState`).
///
/// It encodes and decodes exactly as a struct with the nine properties would: the eight shared keys, then the field's
/// key; absent and `null` values are `nil`, unknown keys are ignored.
public struct DeviceEventOutput<Field: DeviceEventField>: VortexDevicePayload {
    /// The event type, such as `device/presenceChanged`; `nil` when the payload had none (legacy GraphQL payloads).
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// The organization identifier.
    public var orgId: String?
    /// The site (device group) identifier; metadata only, the backend authorizes.
    public var siteId: String?
    /// The AWS IoT thing name (device identifier).
    public var thingName: String?
    /// The device model identifier.
    public var derivant: String?
    /// The device MAC address.
    public var mac: String?
    /// The legacy GraphQL name of `siteId`; absent from the new schema.
    public var deviceGroupID: String?
    /// The kind's own field, published under its own name (`online`, `recording`, `fwUpdateState`).
    var value: Field.Value?

    /// Creates a payload; `value` is the kind's own field: `online`, `recording` or `fwUpdateState`.
    public init(
        eventType: String? = nil, timestamp: String? = nil, orgId: String? = nil, siteId: String? = nil,
        thingName: String? = nil, derivant: String? = nil, mac: String? = nil, deviceGroupID: String? = nil,
        value: Field.Value? = nil
    ) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.siteId = siteId
        self.thingName = thingName
        self.derivant = derivant
        self.mac = mac
        self.deviceGroupID = deviceGroupID
        self.value = value
    }

    /// Every JSON key this model decodes.
    public static var knownFields: Set<String> { Set(DeviceKey.shared.map(\.rawValue) + [Field.key.name]) }

    /// The name of the model, such as `DevicePresenceOutput`.
    public static var modelName: String { Field.modelName }
}

extension DeviceEventOutput: Codable {
    /// A key of the encoded payload: the eight shared ones and the field's, which a generic type cannot list in a
    /// `CodingKeys` enum.
    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ stringValue: String) { self.stringValue = stringValue }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes the nine keys; absent and `null` are `nil`, unknown keys are ignored.
    public init(from decoder: any Decoder) throws {
        try self.init(decoding: decoder)
    }

    /// Encodes the keys whose values are not `nil`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        let shared = [eventType, timestamp, orgId, siteId, thingName, derivant, mac, deviceGroupID]
        for (key, value) in zip(DeviceKey.shared, shared) { try container.encodeIfPresent(value, forKey: Key(key.rawValue)) }
        try container.encodeIfPresent(value, forKey: Key(Field.key.name))
    }
}

extension DeviceEventOutput: DevicePayloadFields {
    static var blank: Self { Self() }

    mutating func readKindField(_ key: DeviceKey, _ value: some DeviceMemberValue) throws {
        if key == Field.key.deviceKey { self.value = try value.optional(Field.Value.self) }
    }
}

extension DeviceEventOutput {
    /// The shared fields of `fields` (a model of another device kind, or the merged one) and the kind's own `value`.
    init(copying fields: some DevicePayloadFields, value: Field.Value?) {
        self.init(
            eventType: fields.eventType, timestamp: fields.timestamp, orgId: fields.orgId, siteId: fields.siteId,
            thingName: fields.thingName, derivant: fields.derivant, mac: fields.mac, deviceGroupID: fields.deviceGroupID,
            value: value)
    }
}
