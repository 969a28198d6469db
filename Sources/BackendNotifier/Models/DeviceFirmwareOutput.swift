/// A device's firmware update state changed (`device/firmwareUpdated`).
///
/// Published on `vortex-app/user/{userId}/device/firmwareUpdated` with `eventType` `device/firmwareUpdated`.
public struct DeviceFirmwareOutput: VortexDevicePayload {
    /// The event type, `device/firmwareUpdated`; `nil` when the payload had none (legacy GraphQL payloads).
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
    /// The firmware update state, documented as -1...14; other values still decode (see `isFirmwareStateInRange`).
    public var fwUpdateState: Int?

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
        fwUpdateState: Int? = nil
    ) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.siteId = siteId
        self.thingName = thingName
        self.derivant = derivant
        self.mac = mac
        self.deviceGroupID = deviceGroupID
        self.fwUpdateState = fwUpdateState
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, siteId, thingName, derivant, mac, deviceGroupID, fwUpdateState
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}

extension DeviceFirmwareOutput {
    /// The documented range of `fwUpdateState`.
    public static let fwUpdateStateRange: ClosedRange<Int> = -1...14

    /// `false` only when `fwUpdateState` is present and outside ``fwUpdateStateRange``; an absent or null
    /// state is allowed by the schema and counts as in range.
    public var isFirmwareStateInRange: Bool {
        fwUpdateState.map(Self.fwUpdateStateRange.contains) ?? true
    }
}

extension DeviceFirmwareOutput: DevicePayloadFields {
    init(flat object: FlatJSONDecoder.ObjectView) throws {
        self.init()
        try read(object) { model, key, value in
            if case "fwUpdateState" = key { model.fwUpdateState = try value.optionalInt() }
        }
    }
}
