/// A device went online or offline (`device/presenceChanged`).
///
/// Published on `vortex-app/user/{userId}/device/presenceChanged` with `eventType` `device/presenceChanged`.
public typealias DevicePresenceOutput = DeviceEventOutput<DevicePresenceField>

/// The field of ``DevicePresenceOutput``: `online`.
public enum DevicePresenceField: DeviceEventField {
    /// Whether the device is online.
    public typealias Value = Bool
    /// `online`.
    public static var key: DeviceEventFieldKey { .online }
    /// `DevicePresenceOutput`.
    public static var modelName: String { "DevicePresenceOutput" }
}

extension DeviceEventOutput where Field == DevicePresenceField {
    /// Whether the device is online.
    public var online: Bool? {
        get { value }
        set { value = newValue }
    }
}
