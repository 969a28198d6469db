import Foundation

/// One event of the nine-kind API: the kind and its payload model.
///
/// Encodes as its payload alone (no wrapper), so it round-trips through ``VortexEventDecoder/decode(_:from:)``.
public enum VortexEvent: Sendable, Equatable, Encodable {
    /// `device/presenceChanged`.
    case devicePresence(DevicePresenceOutput)
    /// `device/recordingStateChanged`.
    case deviceRecording(DeviceRecordingOutput)
    /// `device/firmwareUpdated`.
    case deviceFirmware(DeviceFirmwareOutput)
    /// `archive/stateChanged`.
    case archiveState(ArchiveStateOutput)
    /// `organization/licensePhaseChanged`.
    case licensePhase(LicenseStateOutput)
    /// `organization/planChanged`.
    case plan(PlanStateOutput)
    /// `organization/aiSettingsChanged`.
    case aiSettings(AISettingsOutput)
    /// `user/roleChanged`.
    case roleChanged(RoleChangeOutput)
    /// `user/tokenRevoked`.
    case tokenRevoked(UserTokenRevokeOutput)

    /// The event's kind.
    public var kind: VortexEventKind {
        switch self {
        case .devicePresence: .devicePresence
        case .deviceRecording: .deviceRecording
        case .deviceFirmware: .deviceFirmware
        case .archiveState: .archiveState
        case .licensePhase: .licensePhase
        case .plan: .plan
        case .aiSettings: .aiSettings
        case .roleChanged: .roleChanged
        case .tokenRevoked: .tokenRevoked
        }
    }

    /// The payload model.
    public var payload: any VortexEventPayload {
        switch self {
        case .devicePresence(let value): value
        case .deviceRecording(let value): value
        case .deviceFirmware(let value): value
        case .archiveState(let value): value
        case .licensePhase(let value): value
        case .plan(let value): value
        case .aiSettings(let value): value
        case .roleChanged(let value): value
        case .tokenRevoked(let value): value
        }
    }

    /// The payload's `eventType`.
    public var eventType: String? { payload.eventType }

    /// The payload's `timestamp` text.
    public var timestamp: String? { payload.timestamp }

    /// The payload's `timestamp` parsed as ISO 8601 (for publish-to-delivery latency).
    public var date: Date? { payload.date }

    /// Wraps `payload` as the event of its kind; `nil` for a type that is not one of the nine payload models.
    public init?(_ payload: any VortexEventPayload) {
        switch payload {
        case let value as DevicePresenceOutput: self = .devicePresence(value)
        case let value as DeviceRecordingOutput: self = .deviceRecording(value)
        case let value as DeviceFirmwareOutput: self = .deviceFirmware(value)
        case let value as ArchiveStateOutput: self = .archiveState(value)
        case let value as LicenseStateOutput: self = .licensePhase(value)
        case let value as PlanStateOutput: self = .plan(value)
        case let value as AISettingsOutput: self = .aiSettings(value)
        case let value as RoleChangeOutput: self = .roleChanged(value)
        case let value as UserTokenRevokeOutput: self = .tokenRevoked(value)
        default: return nil
        }
    }

    /// Encodes the payload itself.
    public func encode(to encoder: any Encoder) throws {
        try payload.encode(to: encoder)
    }
}
