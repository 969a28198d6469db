/// Decides whether the signed-in user may see a device's events (seed 000's client-side filtering by device group).
///
/// With user-level AppSync channels the backend already filters, so the default lets everything through; an app
/// that wants a second line of defence injects its own (for example backed by its privilege provider).
/// Applied to device and archive events on every API and transport; events without a device group pass.
public protocol DeviceEventFilter: Sendable {
    /// Whether events of devices in `deviceGroupID` may be delivered.
    func canAccessDevice(deviceGroupID: String) -> Bool
}

/// The default ``DeviceEventFilter``: everything passes.
public struct AllowAllDeviceEvents: DeviceEventFilter {
    /// Creates the filter.
    public init() {}
    /// Always `true`.
    public func canAccessDevice(deviceGroupID: String) -> Bool { true }
}
