import BackendNotifier
import Composition
import Foundation
import LocalBackend
import RealtimeStore
import SubscriberCore

extension DrillRunner {
    /// The store heals a gap, as the demo shows it: a `RealtimeStore` on AppSync with the backend's `GET /vortex/state`
    /// as its backfill follows `devices` devices live; the app goes to the background (the connection is suspended at
    /// once), every device changes meanwhile, and on foreground the notifier reports the gap and the store heals it.
    /// Needs the `admin` trigger (it publishes its own events).
    public func runStoreHealing(devices: Int = 10) async throws -> StoreHealingReport {
        guard case .admin(let backend) = trigger else { throw DrillError.backend("the store check publishes its own events") }
        guard let organization = target.identity.organization else { throw DrillError.backend("the store check needs an organization") }
        let user = target.identity.user
        var target = self.target
        target.configuration.backgroundGraceSeconds = 0.1
        let stack = try target.stack(.appsync)
        let endpoint = try StateEndpoint(
            base: backend.endpoints.http, organizationId: organization, userId: user, authorization: try backend.token(for: user))
        let store = await MainActor.run {
            let store = RealtimeStore(notifier: stack.notifier)
            endpoint.register(on: store)
            return store
        }
        let recorded = Locked<[NotifierConnectionEvent]>([])
        let suspended = OneShotSignal<Void>()
        let connectionEvents = await stack.notifier.connectionEvents()
        let recording = Task {
            for await event in connectionEvents {
                recorded.withLock { $0.append(event) }
                if event == .suspended { suspended.fire() }
            }
        }
        let feeding = Task { await store.run() }
        func publish(online: Bool) async throws {
            for index in 0..<devices {
                try await backend.publish(
                    DomainEvent(
                        kind: .devicePresence, orgId: organization, deviceGroupId: target.identity.deviceGroup,
                        payload: ["thingName": .string("demo-\(index)"), "mac": .string("demo-mac-\(index)"), "online": .bool(online)]))
            }
        }
        func report() async throws -> StoreHealingReport {
            try await publish(online: true)
            let names = (0..<devices).map { "demo-\($0)" }
            guard
                await Self.until(
                    store, seconds: 15, { store in names.allSatisfy { store.devices[$0] != nil } && !store.isStale(.devicePresence) })
            else {
                throw DrillError.notLive("the store did not load the devices")
            }
            await stack.notifier.enterBackground()
            guard await Self.within(seconds: 15, { await suspended.wait() != nil }) else { throw DrillError.notLive("no suspension") }
            try await publish(online: false)
            await stack.notifier.enterForeground()
            let healed = await Self.until(store, seconds: 15) { store in
                !store.isStale(.devicePresence) && names.allSatisfy { store.devices[$0]?.presence?.payload.online == false }
            }
            let gap = recorded.withLock { $0 }.compactMap { event -> Double? in
                if case .resumed(_, _, let gap) = event { return gap.duration }
                return nil
            }.max()
            let reference = try StoreStateDocument.canonical(stateBody: try await endpoint.fetch())
            let (state, fromBackfill) = try await MainActor.run {
                (
                    try StoreStateDocument.json(of: store, organizationId: organization, userId: user),
                    names.filter { store.devices[$0]?.presence?.origin == .backfill }.count
                )
            }
            return StoreHealingReport(
                publishedInGap: devices, gapSeconds: gap ?? 0, healedFromBackfill: healed ? fromBackfill : 0,
                equalsBackend: healed && state == reference)
        }
        do {
            let result = try await report()
            feeding.cancel()
            recording.cancel()
            await stack.shutdown()
            return result
        } catch {
            feeding.cancel()
            recording.cancel()
            await stack.shutdown()
            throw error
        }
    }

    /// Whether `condition` holds on the store within `seconds`, checked after every change (no polling).
    static func until(
        _ store: RealtimeStore, seconds: Double, _ condition: @escaping @MainActor @Sendable (RealtimeStore) -> Bool
    ) async -> Bool {
        let changes = await store.changes()
        return await within(seconds: seconds) { @MainActor in
            if condition(store) { return true }
            for await _ in changes where condition(store) { return true }
            return false
        }
    }

    /// `wait`'s answer, or `false` after `seconds`.
    static func within(seconds: Double, _ wait: @escaping @Sendable () async -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask(operation: wait)
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
