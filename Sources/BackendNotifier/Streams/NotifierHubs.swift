/// The eleven public streams: five of the merged legacy API (three shared with the nine-method API) and the six
/// streams only the nine-method API has.
struct NotifierHubs: Sendable {
    let deviceMerged: StreamHub<DeviceStateOutput>
    let organizationMerged: StreamHub<OrganizationStateOutput>
    let archive: StreamHub<ArchiveStateOutput>
    let role: StreamHub<RoleChangeOutput>
    let revoke: StreamHub<UserTokenRevokeOutput>
    let presence: StreamHub<DevicePresenceOutput>
    let recording: StreamHub<DeviceRecordingOutput>
    let firmware: StreamHub<DeviceFirmwareOutput>
    let license: StreamHub<LicenseStateOutput>
    let plan: StreamHub<PlanStateOutput>
    let aiSettings: StreamHub<AISettingsOutput>

    init(policy: ObserverBufferPolicy, metrics: NotifierMetrics, onDrop: ObserverDrops) {
        func hub<T>(_ name: String) -> StreamHub<T> { StreamHub(name: name, policy: policy, metrics: metrics.stream(name), drops: onDrop) }
        deviceMerged = hub("device")
        organizationMerged = hub("organization")
        archive = hub("archive")
        role = hub("role")
        revoke = hub("revoke")
        presence = hub("devicePresence")
        recording = hub("deviceRecording")
        firmware = hub("deviceFirmware")
        license = hub("license")
        plan = hub("plan")
        aiSettings = hub("aiSettings")
    }

    /// Whether any stream fed by `upstream` has an observer.
    func isDemanded(_ upstream: Upstream) -> Bool {
        switch upstream {
        case .device: deviceMerged.hasObservers || presence.hasObservers || recording.hasObservers || firmware.hasObservers
        case .organization: organizationMerged.hasObservers || license.hasObservers || plan.hasObservers || aiSettings.hasObservers
        case .archive: archive.hasObservers
        case .role: role.hasObservers
        case .revoke: revoke.hasObservers
        }
    }

    /// Whether any stream only the nine-method API has, fed by `upstream`, has an observer.
    func hasNineMethodObservers(of upstream: Upstream) -> Bool {
        switch upstream {
        case .device: presence.hasObservers || recording.hasObservers || firmware.hasObservers
        case .organization: license.hasObservers || plan.hasObservers || aiSettings.hasObservers
        case .archive, .role, .revoke: false
        }
    }

    /// Ends every observer's stream (the notifier shuts down or is released).
    func finishAll() {
        deviceMerged.finish()
        organizationMerged.finish()
        archive.finish()
        role.finish()
        revoke.finish()
        presence.finish()
        recording.finish()
        firmware.finish()
        license.finish()
        plan.finish()
        aiSettings.finish()
    }

    /// Per-stream counts for ``BackendNotifier/statistics()``.
    var counts: [String: NotifierStatistics.StreamStatistics] {
        func entry<T>(_ hub: StreamHub<T>) -> (String, NotifierStatistics.StreamStatistics) {
            (hub.name, NotifierStatistics.StreamStatistics(delivered: hub.deliveredCount, dropped: hub.droppedCount))
        }
        return Dictionary(
            uniqueKeysWithValues: [
                entry(deviceMerged), entry(organizationMerged), entry(archive), entry(role), entry(revoke), entry(presence),
                entry(recording), entry(firmware), entry(license), entry(plan), entry(aiSettings),
            ])
    }
}
