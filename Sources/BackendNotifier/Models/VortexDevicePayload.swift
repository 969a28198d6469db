import Foundation

/// The device fields shared by the device and archive payloads (``DevicePresenceOutput``,
/// ``DeviceRecordingOutput``, ``DeviceFirmwareOutput``, ``ArchiveStateOutput``) and the legacy
/// ``DeviceStateOutput``.
public protocol VortexDevicePayload: VortexEventPayload {
    /// The organization identifier.
    var orgId: String? { get }
    /// The site (device group) identifier; metadata only, the backend authorizes.
    var siteId: String? { get }
    /// The AWS IoT thing name (device identifier).
    var thingName: String? { get }
    /// The device model identifier.
    var derivant: String? { get }
    /// The device MAC address.
    var mac: String? { get }
    /// The legacy GraphQL name of ``siteId``.
    var deviceGroupID: String? { get }
}

extension VortexDevicePayload {
    /// The device group, whichever name carried it: ``siteId`` (new schema) or else ``deviceGroupID`` (legacy).
    public var deviceGroup: String? { siteId ?? deviceGroupID }
}
