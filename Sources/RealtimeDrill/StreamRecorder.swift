import BackendNotifier
import Foundation
import SubscriberCore

/// Observes every public stream of a notifier (both APIs) and records each value with its `timestamp`.
final class StreamRecorder: Sendable {
    struct Entry: Sendable {
        let timestamp: String
        let json: String
        let receivedAt: Date
    }

    private let entries = Locked<[String: [Entry]]>([:])
    private let connectionEvents = Locked<[NotifierConnectionEvent]>([])
    private let latest = Locked(Date.distantPast)
    private let tasks = Locked<[Task<Void, Never>]>([])
    /// Values are shown only after the warm-up (the sentinels are not part of the story).
    private let displaying = Locked(false)
    /// Called for every value (the demo prints them live).
    private let onValue: @Sendable (String, String) -> Void

    init(notifier: BackendNotifier, onValue: @escaping @Sendable (String, String) -> Void = { _, _ in }) async {
        self.onValue = onValue
        let streams: [(String, @Sendable () async -> Void)] = [
            ("devicePresence", { [self] in await self.drain(await notifier.devicePresenceValues(), "devicePresence") }),
            ("deviceRecording", { [self] in await self.drain(await notifier.deviceRecordingValues(), "deviceRecording") }),
            ("deviceFirmware", { [self] in await self.drain(await notifier.deviceFirmwareValues(), "deviceFirmware") }),
            ("device", { [self] in await self.drain(await notifier.deviceValues(), "device") }),
            ("archive", { [self] in await self.drain(await notifier.archiveValues(), "archive") }),
            ("license", { [self] in await self.drain(await notifier.licenseValues(), "license") }),
            ("plan", { [self] in await self.drain(await notifier.planValues(), "plan") }),
            ("aiSettings", { [self] in await self.drain(await notifier.aiSettingsValues(), "aiSettings") }),
            ("organization", { [self] in await self.drain(await notifier.organizationValues(), "organization") }),
            ("role", { [self] in await self.drain(await notifier.roleValues(), "role") }),
            ("revoke", { [self] in await self.drain(await notifier.revokeValues(), "revoke") }),
        ]
        let events = await notifier.connectionEvents()
        var started = streams.map { _, body in Task { await body() } }
        started.append(
            Task { [connectionEvents] in
                for await event in events { connectionEvents.withLock { $0.append(event) } }
            })
        tasks.withLock { $0 = started }
    }

    private func drain<T: Encodable & Sendable>(_ stream: AsyncStream<T>, _ name: String) async {
        for await value in stream {
            let json = (try? SortedJSON.text(value)) ?? "{}"
            let timestamp =
                (value as? any VortexEventPayload)?.timestamp
                ?? (value as? DeviceStateOutput)?.timestamp ?? (value as? OrganizationStateOutput)?.timestamp ?? ""
            let now = Date()
            entries.withLock { $0[name, default: []].append(Entry(timestamp: timestamp, json: json, receivedAt: now)) }
            latest.withLock { $0 = max($0, now) }
            if displaying.withLock({ $0 }) { onValue(name, json) }
        }
    }

    func values(of stream: String) -> [Entry] { entries.withLock { $0[stream] ?? [] } }

    var events: [NotifierConnectionEvent] { connectionEvents.withLock { $0 } }

    /// When the last value of any stream arrived (`distantPast` before the first).
    var lastReceived: Date { latest.withLock { $0 } }

    /// Every value of the nine streams so far, normalised for matching.
    func observed(identity: DrillIdentity) -> [ObservedEvent] {
        let recorded = entries.withLock { $0 }
        return ObservedEvent.streams.flatMap { stream in
            (recorded[stream] ?? []).compactMap {
                ObservedEvent(
                    stream: stream, json: $0.json, arrivedAt: $0.receivedAt, userId: identity.user, organizationId: identity.organization)
            }
        }
    }

    /// Every transport switch the notifier reported, with its window.
    var switches: [RollbackReport.Switch] {
        events.compactMap { event in
            guard case .transportSwitched(let from, let to, let gap, _) = event else { return nil }
            return RollbackReport.Switch(from: from, to: to, window: gap)
        }
    }

    /// Every window the notifier reported (`resumed`, `eventsLost`, `transportSwitched`), in order.
    var gaps: [ReportedGap] { events.compactMap(ReportedGap.init) }

    /// Forgets what was recorded (after the warm-up).
    func reset() {
        entries.withLock { $0.removeAll() }
        displaying.withLock { $0 = true }
    }

    /// Waits until `count` distinct upstreams reported live (or resumed), or `timeout` seconds pass.
    func waitForLive(upstreams count: Int, timeout: Double) async -> Bool {
        await poll(timeout) {
            Set(
                self.events.compactMap { event -> String? in
                    switch event {
                    case .live(let stream, _), .resumed(let stream, _, _): stream
                    default: nil
                    }
                }
            ).count >= count
        }
    }

    /// Waits until every stream has received every timestamp expected of it, or `timeout` seconds pass.
    func waitFor(_ expected: [String: Set<String>], timeout: Double) async -> Bool {
        await poll(timeout) {
            expected.allSatisfy { stream, timestamps in timestamps.isSubset(of: Set(self.values(of: stream).map(\.timestamp))) }
        }
    }

    private func poll(_ timeout: Double, _ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    func cancel() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }
}
