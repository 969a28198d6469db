/// A device started or stopped recording (`device/recordingStateChanged`).
///
/// Published on `vortex-app/user/{userId}/device/recordingStateChanged` with `eventType` `device/recordingStateChanged`.
public typealias DeviceRecordingOutput = DeviceEventOutput<DeviceRecordingField>

/// The field of ``DeviceRecordingOutput``: `recording`.
public enum DeviceRecordingField: DeviceEventField {
    /// Whether the device is recording.
    public typealias Value = Bool
    /// `recording`.
    public static var key: DeviceEventFieldKey { .recording }
    /// `DeviceRecordingOutput`.
    public static var modelName: String { "DeviceRecordingOutput" }
}

extension DeviceEventOutput where Field == DeviceRecordingField {
    /// Whether the device is recording.
    public var recording: Bool? {
        get { value }
        set { value = newValue }
    }

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
        self.init(
            eventType: eventType, timestamp: timestamp, orgId: orgId, siteId: siteId, thingName: thingName, derivant: derivant,
            mac: mac, deviceGroupID: deviceGroupID, value: recording)
    }
}
