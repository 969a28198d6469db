import BackendNotifier
import Foundation

/// The store's merge rules, as a pure value: every live or backfilled event goes through ``apply(_:origin:)``.
///
/// Per entity and kind the newest event wins, by its `timestamp` (the rule `GET /vortex/state` answers by):
/// - an event older than the value held is dropped, live or backfilled: an entity never goes backwards;
/// - an event equal to the value held is a duplicate (a backfill returning what was delivered live) and changes nothing;
/// - without a timestamp on either side, only a live event replaces the value held (live events arrive in order); a
///   backfilled one cannot be placed and is dropped, unless nothing is held (GraphQL documents must select `timestamp`
///   for backfills to heal values delivered over GraphQL: the default legacy documents do not);
/// - of two different events with the same instant, the later applied wins.
///
/// Devices are keyed by `thingName` (an event without one names no entity); the organization's kinds and the user's
/// belong to the identity the store follows. Archive events are history, not state: they are not kept.
struct StoreLedger: Sendable, Equatable {
    /// One kind of one entity: what a newer value replaces.
    struct Entity: Hashable, Sendable {
        let kind: VortexEventKind
        /// The thing name for device kinds; empty for the organization's and the user's.
        let name: String
    }

    /// What ``apply(_:origin:)`` did.
    enum Outcome: Equatable, Sendable {
        case applied(Entity)
        /// Older than the value held (or a backfilled value without a timestamp): dropped.
        case older
        /// Equal to the value held.
        case duplicate
        /// Not state (archive events) or naming no entity (a device event without a thing name).
        case notKept
    }

    private(set) var snapshot = StoreSnapshot()

    mutating func apply(_ event: VortexEvent, origin: StoreOrigin) -> Outcome {
        let kind = event.kind
        switch event {
        case .devicePresence(let output):
            guard let thing = output.thingName else { return .notKept }
            return Self.merge(&snapshot.devices[thing, default: DeviceState()].presence, output, origin, Entity(kind: kind, name: thing))
        case .deviceRecording(let output):
            guard let thing = output.thingName else { return .notKept }
            return Self.merge(&snapshot.devices[thing, default: DeviceState()].recording, output, origin, Entity(kind: kind, name: thing))
        case .deviceFirmware(let output):
            guard let thing = output.thingName else { return .notKept }
            return Self.merge(&snapshot.devices[thing, default: DeviceState()].firmware, output, origin, Entity(kind: kind, name: thing))
        case .licensePhase(let output): return Self.merge(&snapshot.organization.license, output, origin, Entity(kind: kind, name: ""))
        case .plan(let output): return Self.merge(&snapshot.organization.plan, output, origin, Entity(kind: kind, name: ""))
        case .aiSettings(let output): return Self.merge(&snapshot.organization.aiSettings, output, origin, Entity(kind: kind, name: ""))
        case .roleChanged(let output): return Self.merge(&snapshot.roleChange, output, origin, Entity(kind: kind, name: ""))
        case .tokenRevoked(let output): return Self.merge(&snapshot.tokenRevocation, output, origin, Entity(kind: kind, name: ""))
        case .archiveState: return .notKept
        }
    }

    private static func merge<Payload: VortexEventPayload>(
        _ slot: inout StoreValue<Payload>?, _ payload: Payload, _ origin: StoreOrigin, _ entity: Entity
    ) -> Outcome {
        let instant = payload.date
        if let held = slot {
            if held.payload == payload { return .duplicate }
            if let old = held.instant, let new = instant, new < old { return .older }
            // A backfilled value can be placed only against a held value with a timestamp.
            if origin == .backfill, instant == nil || held.instant == nil { return .older }
        }
        slot = StoreValue(payload: payload, instant: instant, origin: origin)
        return .applied(entity)
    }
}
