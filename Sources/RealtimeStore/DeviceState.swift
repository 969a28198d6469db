import BackendNotifier

/// What the store knows about one device: its newest presence, recording and firmware events.
public struct DeviceState: Sendable, Equatable {
    /// The newest `device/presenceChanged`.
    public var presence: StoreValue<DevicePresenceOutput>?
    /// The newest `device/recordingStateChanged`.
    public var recording: StoreValue<DeviceRecordingOutput>?
    /// The newest `device/firmwareUpdated`.
    public var firmware: StoreValue<DeviceFirmwareOutput>?

    /// An empty device.
    public init() {}
}
