/// The keys of a device event's payload: the eight every device event carries (the first four, `eventType`,
/// `timestamp`, `orgId` and `siteId`, head every kind's payload), then the one that tells its kind. The one place they
/// are spelled, for the client's models and the local backend's payloads alike.
package enum DeviceKey: String, CaseIterable, Sendable, CodingKey {
    case eventType
    case timestamp
    case orgId
    case siteId
    case thingName
    case derivant
    case mac
    case deviceGroupID
    /// ``VortexEventKind/devicePresence``'s field.
    case online
    /// ``VortexEventKind/deviceRecording``'s field.
    case recording
    /// ``VortexEventKind/deviceFirmware``'s field.
    case fwUpdateState

    /// The eight keys every device event carries, in the order they are encoded.
    package static let shared: [DeviceKey] = [.eventType, .timestamp, .orgId, .siteId, .thingName, .derivant, .mac, .deviceGroupID]

    /// The key spelled by `bytes` (an unescaped JSON key), if any. Every key fits a small string, so nothing is
    /// allocated.
    package init?(bytes: UnsafeBufferPointer<UInt8>) {
        for key in Self.allCases {
            var name = key.rawValue
            if name.utf8.count == bytes.count && name.withUTF8({ $0.elementsEqual(bytes) }) {
                self = key
                return
            }
        }
        return nil
    }
}
