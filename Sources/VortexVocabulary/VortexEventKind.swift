/// The nine event kinds of the AppSync Events API, one per user-level channel, with their names on both APIs: the
/// one place they are spelled, for the client (`BackendNotifier`) and the local backend alike.
///
/// | kind | `eventType` | channel after `vortex-app/user/{userId}/` | legacy GraphQL subscription |
/// |---|---|---|---|
/// | `devicePresence` | `device/presenceChanged` | `device/presenceChanged` | `subscribeDeviceState` |
/// | `deviceRecording` | `device/recordingStateChanged` | `device/recordingStateChanged` | `subscribeDeviceState` |
/// | `deviceFirmware` | `device/firmwareUpdated` | `device/firmwareUpdated` | `subscribeDeviceState` |
/// | `archiveState` | `archive/stateChanged` | `archive/stateChanged` | `subscribeArchiveState` |
/// | `licensePhase` | `organization/licensePhaseChanged` | `organization/licensePhaseChanged` | `subscribeOrganizationState` |
/// | `plan` | `organization/planChanged` | `organization/planChanged` | `subscribeOrganizationState` |
/// | `aiSettings` | `organization/aiSettingsChanged` | `organization/aiSettingsChanged` | `subscribeOrganizationState` |
/// | `roleChanged` | `user/roleChanged` | `roleChanged` | `subscribeRoleChange` |
/// | `tokenRevoked` | `user/tokenRevoked` | `tokenRevoked` | `subscribeUserTokenRevoke` |
public enum VortexEventKind: String, CaseIterable, Sendable, Codable {
    /// Device presence (`online`).
    case devicePresence
    /// Device recording state (`recording`).
    case deviceRecording
    /// Device firmware update state (`fwUpdateState`).
    case deviceFirmware
    /// Archive state (`status`, `videoLength`, …).
    case archiveState
    /// Organization licence phase (`licensePhase`).
    case licensePhase
    /// Organization plan (`isFreePlan`).
    case plan
    /// Organization AI settings (`aiControlSetting`).
    case aiSettings
    /// The user's role changed (`reason`).
    case roleChanged
    /// The user's tokens were revoked (`revokedAt`, `reason`, `requestId`).
    case tokenRevoked

    /// The `eventType` value payloads of this kind carry, such as `device/presenceChanged`.
    public var eventType: String {
        switch self {
        case .devicePresence: "device/presenceChanged"
        case .deviceRecording: "device/recordingStateChanged"
        case .deviceFirmware: "device/firmwareUpdated"
        case .archiveState: "archive/stateChanged"
        case .licensePhase: "organization/licensePhaseChanged"
        case .plan: "organization/planChanged"
        case .aiSettings: "organization/aiSettingsChanged"
        case .roleChanged: "user/roleChanged"
        case .tokenRevoked: "user/tokenRevoked"
        }
    }

    /// The channel path after `vortex-app/user/{userId}/`, such as `device/presenceChanged` or `roleChanged`.
    public var channelSuffix: String {
        switch self {
        case .roleChanged: "roleChanged"
        case .tokenRevoked: "tokenRevoked"
        default: eventType
        }
    }

    /// The legacy GraphQL subscription that carries this kind, such as `subscribeDeviceState`.
    public var legacySubscription: String {
        switch self {
        case .devicePresence, .deviceRecording, .deviceFirmware: "subscribeDeviceState"
        case .archiveState: "subscribeArchiveState"
        case .licensePhase, .plan, .aiSettings: "subscribeOrganizationState"
        case .roleChanged: "subscribeRoleChange"
        case .tokenRevoked: "subscribeUserTokenRevoke"
        }
    }

    /// The device field that tells a device kind (`online`, `recording`, `fwUpdateState`); `nil` for other kinds.
    package var deviceField: DeviceKey? {
        switch self {
        case .devicePresence: .online
        case .deviceRecording: .recording
        case .deviceFirmware: .fwUpdateState
        default: nil
        }
    }

    /// The full channel name for `userId`: `vortex-app/user/{userId}/` followed by ``channelSuffix``.
    public func channel(userId: String) -> String {
        "vortex-app/user/\(userId)/\(channelSuffix)"
    }

    /// The kind whose ``eventType`` is spelled exactly by `bytes` (an unescaped JSON string), if any: no string is
    /// made, where ``init(eventType:)`` needs one (and accepts the tolerated spellings too). The notifier reads every
    /// device event's kind this way.
    package init?(eventTypeBytes bytes: UnsafeBufferPointer<UInt8>) {
        guard let kind = Self.allCases.first(where: { bytes.spells($0.eventType) }) else { return nil }
        self = kind
    }

    /// The kind whose ``eventType`` is `eventType`.
    ///
    /// Also accepts, for tolerance, a kind's ``channelSuffix`` (`roleChanged`, `tokenRevoked`) and
    /// `license/phaseChanged`, the example spelling in seed 001 §7. Anything else is `nil`.
    public init?(eventType: String) {
        if let kind = Self.allCases.first(where: { $0.eventType == eventType || $0.channelSuffix == eventType }) {
            self = kind
        } else if eventType == "license/phaseChanged" {
            self = .licensePhase
        } else {
            return nil
        }
    }
}
