/// The nine event kinds of the AppSync Events API, one per user-level channel, with their names on both APIs.
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
public enum VortexEventKind: String, CaseIterable, Sendable {
    /// Device presence, ``DevicePresenceOutput``.
    case devicePresence
    /// Device recording state, ``DeviceRecordingOutput``.
    case deviceRecording
    /// Device firmware update state, ``DeviceFirmwareOutput``.
    case deviceFirmware
    /// Archive state, ``ArchiveStateOutput``.
    case archiveState
    /// Organization licence phase, ``LicenseStateOutput``.
    case licensePhase
    /// Organization plan, ``PlanStateOutput``.
    case plan
    /// Organization AI settings, ``AISettingsOutput``.
    case aiSettings
    /// The user's role changed, ``RoleChangeOutput``.
    case roleChanged
    /// The user's tokens were revoked, ``UserTokenRevokeOutput``.
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

    /// The payload model of this kind.
    public var payloadType: any VortexEventPayload.Type {
        switch self {
        case .devicePresence: DevicePresenceOutput.self
        case .deviceRecording: DeviceRecordingOutput.self
        case .deviceFirmware: DeviceFirmwareOutput.self
        case .archiveState: ArchiveStateOutput.self
        case .licensePhase: LicenseStateOutput.self
        case .plan: PlanStateOutput.self
        case .aiSettings: AISettingsOutput.self
        case .roleChanged: RoleChangeOutput.self
        case .tokenRevoked: UserTokenRevokeOutput.self
        }
    }

    /// The full channel name for `userId`: `vortex-app/user/{userId}/` followed by ``channelSuffix``.
    public func channel(userId: String) -> String {
        "vortex-app/user/\(userId)/\(channelSuffix)"
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
