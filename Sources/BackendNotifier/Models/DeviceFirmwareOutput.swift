/// A device's firmware update state changed (`device/firmwareUpdated`).
///
/// Published on `vortex-app/user/{userId}/device/firmwareUpdated` with `eventType` `device/firmwareUpdated`.
public typealias DeviceFirmwareOutput = DeviceEventOutput<DeviceFirmwareField>

/// The field of ``DeviceFirmwareOutput``: `fwUpdateState`.
public enum DeviceFirmwareField: DeviceEventField {
    /// The firmware update state.
    public typealias Value = Int
    /// `fwUpdateState`.
    public static var key: DeviceEventFieldKey { .fwUpdateState }
    /// `DeviceFirmwareOutput`.
    public static var modelName: String { "DeviceFirmwareOutput" }
}

extension DeviceEventOutput where Field == DeviceFirmwareField {
    /// The firmware update state, documented as -1...14; other values still decode (see `isFirmwareStateInRange`).
    public var fwUpdateState: Int? {
        get { value }
        set { value = newValue }
    }

    /// The documented range of `fwUpdateState`.
    public static var fwUpdateStateRange: ClosedRange<Int> { -1...14 }

    /// `false` only when `fwUpdateState` is present and outside ``fwUpdateStateRange``; an absent or null
    /// state is allowed by the schema and counts as in range.
    public var isFirmwareStateInRange: Bool {
        fwUpdateState.map(Self.fwUpdateStateRange.contains) ?? true
    }
}
