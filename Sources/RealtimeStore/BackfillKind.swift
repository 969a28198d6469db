import BackendNotifier

/// A kind of event the store follows, typed by its payload: ``RealtimeStore/backfill(_:_:)`` takes `.devicePresence`
/// with a function returning `[DevicePresenceOutput]`, and ``RealtimeStore/values(_:)`` gives `.devicePresence`'s
/// values as `DevicePresenceOutput`s, and so on, so a function cannot be registered for the wrong kind.
public struct BackfillKind<Output: VortexEventPayload>: Sendable {
    let kind: VortexEventKind
    let wrap: @Sendable (Output) -> VortexEvent
}

extension BackfillKind where Output == DevicePresenceOutput {
    /// Device presence.
    public static var devicePresence: Self { Self(kind: .devicePresence, wrap: VortexEvent.devicePresence) }
}

extension BackfillKind where Output == DeviceRecordingOutput {
    /// Device recording state.
    public static var deviceRecording: Self { Self(kind: .deviceRecording, wrap: VortexEvent.deviceRecording) }
}

extension BackfillKind where Output == DeviceFirmwareOutput {
    /// Device firmware update state.
    public static var deviceFirmware: Self { Self(kind: .deviceFirmware, wrap: VortexEvent.deviceFirmware) }
}

extension BackfillKind where Output == ArchiveStateOutput {
    /// Archive state changes. They are history, not state: the store holds none of them, and its value stream
    /// (``RealtimeStore/values(_:)``) delivers each one once, live or backfilled. Windows of the archive stream are
    /// tracked (``RealtimeStore/isStale(_:)``) and backfilled only once an archive backfill is registered.
    public static var archiveState: Self { Self(kind: .archiveState, wrap: VortexEvent.archiveState) }
}

extension BackfillKind where Output == LicenseStateOutput {
    /// The organization's licence phase.
    public static var licensePhase: Self { Self(kind: .licensePhase, wrap: VortexEvent.licensePhase) }
}

extension BackfillKind where Output == PlanStateOutput {
    /// The organization's plan.
    public static var plan: Self { Self(kind: .plan, wrap: VortexEvent.plan) }
}

extension BackfillKind where Output == AISettingsOutput {
    /// The organization's AI settings.
    public static var aiSettings: Self { Self(kind: .aiSettings, wrap: VortexEvent.aiSettings) }
}

extension BackfillKind where Output == RoleChangeOutput {
    /// The user's role changes.
    public static var roleChanged: Self { Self(kind: .roleChanged, wrap: VortexEvent.roleChanged) }
}

extension BackfillKind where Output == UserTokenRevokeOutput {
    /// The user's token revocations.
    public static var tokenRevoked: Self { Self(kind: .tokenRevoked, wrap: VortexEvent.tokenRevoked) }
}
