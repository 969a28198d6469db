/// A device started or stopped recording (`device/recordingStateChanged`).
///
/// Published on `vortex-app/user/{userId}/device/recordingStateChanged` with `eventType` `device/recordingStateChanged`.
public struct DeviceRecordingOutput: VortexDevicePayload {
    /// The event type, `device/recordingStateChanged`; `nil` when the payload had none (legacy GraphQL payloads).
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
    /// Whether the device is recording.
    public var recording: Bool?

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
        recording: Bool? = nil
    ) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.siteId = siteId
        self.thingName = thingName
        self.derivant = derivant
        self.mac = mac
        self.deviceGroupID = deviceGroupID
        self.recording = recording
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, siteId, thingName, derivant, mac, deviceGroupID, recording
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))
}

extension DeviceRecordingOutput: DevicePayloadFields {
    init(flat object: FlatJSONDecoder.ObjectView) throws {
        self.init()
        try read(object) { model, key, value in
            if case "recording" = key { model.recording = try value.optionalBool() }
        }
    }
}
