/// A device went online or offline (`device/presenceChanged`).
///
/// Published on `vortex-app/user/{userId}/device/presenceChanged` with `eventType` `device/presenceChanged`.
public struct DevicePresenceOutput: VortexDevicePayload {
    /// The event type, `device/presenceChanged`; `nil` when the payload had none (legacy GraphQL payloads).
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
    /// Whether the device is online.
    public var online: Bool?

    /// Creates a payload.
    public init(
        eventType: String? = nil,
        timestamp: String? = nil,
        orgId: String? = nil,
        siteId: String? = nil,
        thingName: String? = nil,
        derivant: String? = nil,
        mac: String? = nil,
        deviceGroupID: String? = nil,
        online: Bool? = nil
    ) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.siteId = siteId
        self.thingName = thingName
        self.derivant = derivant
        self.mac = mac
        self.deviceGroupID = deviceGroupID
        self.online = online
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, siteId, thingName, derivant, mac, deviceGroupID, online
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}

extension DevicePresenceOutput: DevicePayloadFields {
    init(flat object: FlatJSONDecoder.ObjectView) throws {
        self.init()
        try read(object) { model, key, value in
            if case "online" = key { model.online = try value.optionalBool() }
        }
    }
}
