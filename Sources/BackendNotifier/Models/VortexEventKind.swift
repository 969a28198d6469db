// The nine kinds and their names live in VortexVocabulary, which the local backend shares; an app sees them through
// this module.
@_exported import VortexVocabulary

extension VortexEventKind {
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
}
