import VortexVocabulary

/// The key of a device event's own field (``DeviceEventField/key``): `online`, `recording` or `fwUpdateState`, and no
/// other. The type has no public initializer, so a ``DeviceEventField`` declared outside the package still names a key
/// the device models decode; a key they would never read cannot be spelled.
public struct DeviceEventFieldKey: Sendable, Hashable, CustomStringConvertible {
    /// The vocabulary's key.
    let deviceKey: DeviceKey

    /// `online`: whether the device is online (``DevicePresenceOutput``).
    public static var online: Self { Self(deviceKey: .online) }
    /// `recording`: whether the device is recording (``DeviceRecordingOutput``).
    public static var recording: Self { Self(deviceKey: .recording) }
    /// `fwUpdateState`: the firmware update state (``DeviceFirmwareOutput``).
    public static var fwUpdateState: Self { Self(deviceKey: .fwUpdateState) }

    /// The JSON key, such as `online`.
    public var name: String { deviceKey.rawValue }

    public var description: String { name }
}
