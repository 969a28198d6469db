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

    /// The key spelled by `bytes` (an unescaped JSON key), if any. Decoding calls it for every member of every device
    /// event, so it picks its one candidate by length and first letter and compares once with ``spelling``, without
    /// making a string (comparing with `rawValue` cost four times the rest of the lookup).
    package init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard let first = bytes.first else { return nil }
        let candidate: DeviceKey
        switch (bytes.count, first) {
        case (9, UInt8(ascii: "e")): candidate = .eventType
        case (9, UInt8(ascii: "t")): candidate = bytes[1] == UInt8(ascii: "i") ? .timestamp : .thingName
        case (5, UInt8(ascii: "o")): candidate = .orgId
        case (6, UInt8(ascii: "s")): candidate = .siteId
        case (8, UInt8(ascii: "d")): candidate = .derivant
        case (3, UInt8(ascii: "m")): candidate = .mac
        case (13, UInt8(ascii: "d")): candidate = .deviceGroupID
        case (6, UInt8(ascii: "o")): candidate = .online
        case (9, UInt8(ascii: "r")): candidate = .recording
        case (13, UInt8(ascii: "f")): candidate = .fwUpdateState
        default: return nil
        }
        guard bytes.spells(candidate.spelling) else { return nil }
        self = candidate
    }

    /// ``rawValue`` as a static string, for ``init(bytes:)``; the vocabulary's tests check that the two agree.
    var spelling: StaticString {
        switch self {
        case .eventType: "eventType"
        case .timestamp: "timestamp"
        case .orgId: "orgId"
        case .siteId: "siteId"
        case .thingName: "thingName"
        case .derivant: "derivant"
        case .mac: "mac"
        case .deviceGroupID: "deviceGroupID"
        case .online: "online"
        case .recording: "recording"
        case .fwUpdateState: "fwUpdateState"
        }
    }
}
