import SubscriberCore

// The two public APIs' streams. Every stream is a hub's observer; its upstream runs while any stream it feeds is
// observed.
extension BackendNotifier {
    // MARK: The merged legacy API

    /// Device presence, recording and firmware changes, merged (legacy `subscribeDeviceState`).
    public func deviceValues() -> AsyncStream<DeviceStateOutput> { observe(hubs.deviceMerged, .device) }
    /// Archive state changes (shared by both APIs).
    public func archiveValues() -> AsyncStream<ArchiveStateOutput> { observe(hubs.archive, .archive) }
    /// Licence phase, plan and AI settings changes, merged (legacy `subscribeOrganizationState`).
    public func organizationValues() -> AsyncStream<OrganizationStateOutput> { observe(hubs.organizationMerged, .organization) }
    /// Role changes of the signed-in user (shared by both APIs).
    public func roleValues() -> AsyncStream<RoleChangeOutput> { observe(hubs.role, .role) }
    /// Token revocations of the signed-in user (shared by both APIs).
    public func revokeValues() -> AsyncStream<UserTokenRevokeOutput> { observe(hubs.revoke, .revoke) }

    // MARK: The nine-method API

    /// `device/presenceChanged`.
    public func devicePresenceValues() -> AsyncStream<DevicePresenceOutput> { observe(hubs.presence, .device) }
    /// `device/recordingStateChanged`.
    public func deviceRecordingValues() -> AsyncStream<DeviceRecordingOutput> { observe(hubs.recording, .device) }
    /// `device/firmwareUpdated`.
    public func deviceFirmwareValues() -> AsyncStream<DeviceFirmwareOutput> { observe(hubs.firmware, .device) }
    /// `organization/licensePhaseChanged`.
    public func licenseValues() -> AsyncStream<LicenseStateOutput> { observe(hubs.license, .organization) }
    /// `organization/planChanged`.
    public func planValues() -> AsyncStream<PlanStateOutput> { observe(hubs.plan, .organization) }
    /// `organization/aiSettingsChanged`.
    public func aiSettingsValues() -> AsyncStream<AISettingsOutput> { observe(hubs.aiSettings, .organization) }

    // MARK: Observers

    private func observe<T: Sendable>(_ hub: StreamHub<T>, _ upstream: Upstream) -> AsyncStream<T> {
        let stream = hub.makeStream { [weak self] in
            // The last observer went (on the consumer's thread): whether the upstream is still wanted is decided on
            // the actor, where a new observer may have arrived meanwhile.
            self?.scope.spawn { [weak self] in await self?.releaseIfUnused(upstream) }
        }
        receive(.observed(upstream))
        return stream
    }

    private func releaseIfUnused(_ upstream: Upstream) {
        guard !hubs.isDemanded(upstream) else { return }
        receive(.unobserved(upstream))
    }
}
