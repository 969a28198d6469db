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
}
