/// The kinds of domain event the backend fans out, and where each one goes.
public enum DomainEventKind: String, Sendable, Codable, CaseIterable {
    /// A device went online or offline (`online`).
    case devicePresence
    /// A device started or stopped recording (`recording`).
    case deviceRecording
    /// A device's firmware update progressed (`fwUpdateState`).
    case deviceFirmware
    /// An archive changed state (`status`, `videoLength`, …).
    case archiveState
    /// The organization's licence phase changed (`licensePhase`).
    case licensePhase
    /// The organization's plan changed (`isFreePlan`).
    case plan
    /// The organization's AI settings changed (`aiControlSetting`).
    case aiSettings
    /// A user's role changed (`reason`).
    case roleChanged
    /// A user's tokens were revoked (`revokedAt`, `reason`, `requestId`).
    case tokenRevoked

    /// Who may see an event of a kind.
    public enum Audience: Sendable, Equatable {
        /// Users of the organization permitted to see the device group (admins see every group).
        case deviceGroup
        /// Every user of the organization.
        case organization
        /// The one user the event is about.
        case user
    }

    /// Who may see events of this kind.
    public var audience: Audience {
        switch self {
        case .devicePresence, .deviceRecording, .deviceFirmware, .archiveState: .deviceGroup
        case .licensePhase, .plan, .aiSettings: .organization
        case .roleChanged, .tokenRevoked: .user
        }
    }

    /// The channel path below `vortex-app/user/{userId}/`, for example `device/presenceChanged`.
    public var channelPath: String {
        switch self {
        case .devicePresence: "device/presenceChanged"
        case .deviceRecording: "device/recordingStateChanged"
        case .deviceFirmware: "device/firmwareUpdated"
        case .archiveState: "archive/stateChanged"
        case .licensePhase: "organization/licensePhaseChanged"
        case .plan: "organization/planChanged"
        case .aiSettings: "organization/aiSettingsChanged"
        case .roleChanged: "roleChanged"
        case .tokenRevoked: "tokenRevoked"
        }
    }

    /// The `eventType` field of the published event, for example `device/presenceChanged` or `user/roleChanged`.
    public var eventType: String {
        switch self {
        case .roleChanged: "user/roleChanged"
        case .tokenRevoked: "user/tokenRevoked"
        default: channelPath
        }
    }

    /// The user-level channel of this kind for `userId`: `vortex-app/user/{userId}/<channelPath>`.
    public func channel(forUser userId: String) -> String { "vortex-app/user/\(userId)/\(channelPath)" }
}
