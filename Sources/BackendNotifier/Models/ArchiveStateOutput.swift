import Foundation

/// An archive's state changed (`archive/stateChanged`).
///
/// Published on `vortex-app/user/{userId}/archive/stateChanged`; also the payload of the legacy GraphQL
/// subscription `subscribeArchiveState`, so both the merged and the nine-method API use this type.
public struct ArchiveStateOutput: VortexDevicePayload {
    /// The event type, `archive/stateChanged`; `nil` on legacy GraphQL payloads.
    public var eventType: String?
    /// When the event occurred (ISO 8601).
    public var timestamp: String?
    /// The organization identifier.
    public var orgId: String?
    /// The site (device group) identifier; metadata only, the backend authorizes.
    public var siteId: String?
    /// The AWS IoT thing name of the recording device.
    public var thingName: String?
    /// The device model identifier.
    public var derivant: String?
    /// The device MAC address.
    public var mac: String?
    /// The legacy GraphQL name of `siteId`; absent from the new schema.
    public var deviceGroupID: String?
    /// The archive's state (the value list is this package's choice; see ``ArchiveStatus``).
    public var status: ArchiveStatus?
    /// The video's length (the documents give no unit; seconds is the natural reading).
    public var videoLength: Double?
    /// The video's size (the documents give no unit; bytes is the natural reading).
    public var videoSize: Int?
    /// The size stored in the cloud (the documents give no unit; bytes is the natural reading).
    public var cloudSize: Int?
    /// Whether the video is H.265 encoded.
    public var hasH265: Bool?
    /// When the archive was created, as sent (ISO 8601 expected; see ``createdDate``).
    public var createdAt: String?

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
        status: ArchiveStatus? = nil,
        videoLength: Double? = nil,
        videoSize: Int? = nil,
        cloudSize: Int? = nil,
        hasH265: Bool? = nil,
        createdAt: String? = nil
    ) {
        self.eventType = eventType
        self.timestamp = timestamp
        self.orgId = orgId
        self.siteId = siteId
        self.thingName = thingName
        self.derivant = derivant
        self.mac = mac
        self.deviceGroupID = deviceGroupID
        self.status = status
        self.videoLength = videoLength
        self.videoSize = videoSize
        self.cloudSize = cloudSize
        self.hasH265 = hasH265
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventType, timestamp, orgId, siteId, thingName, derivant, mac, deviceGroupID
        case status, videoLength, videoSize, cloudSize, hasH265, createdAt
    }

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))

    /// ``createdAt`` parsed as ISO 8601; `nil` when absent or in another format.
    public var createdDate: Date? { ISO8601Timestamp.date(from: createdAt) }
}
