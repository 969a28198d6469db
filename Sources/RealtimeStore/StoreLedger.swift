import BackendNotifier
import Foundation

/// The store's merge rules, as a pure value: every live or backfilled event goes through ``apply(_:origin:callStart:)``.
///
/// Per entity and kind the newest event wins, by its `timestamp` (the rule `GET /vortex/state` answers by):
/// - an event older than the value held is dropped, live or backfilled: an entity never goes backwards;
/// - an event equal to the value held is a duplicate (a backfill returning what was delivered live) and changes nothing;
/// - of two different events with the same instant, or without a timestamp on either side, a live event replaces the
///   value held (live events arrive in order); a backfilled one replaces only a value applied before its call started
///   (the backfill answers as of then: a value applied since is at least as new), and is dropped otherwise (GraphQL
///   documents must select `timestamp` for backfills to heal values delivered over GraphQL: the default legacy
///   documents do not). Every applied value records its apply sequence (``sequence``) for this rule.
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

    /// What ``apply(_:origin:callStart:)`` did.
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
    /// How many values were applied: a backfill call records it when it starts (see ``apply(_:origin:callStart:)``).
    private(set) var sequence = 0
    /// The sequence at which each entity's held value was applied.
    private var appliedAt: [Entity: Int] = [:]

    /// Applies `event`. `callStart` is, for a backfilled event, the ``sequence`` when its call started (`nil`: unknown,
    /// so on a tie or a missing timestamp it replaces nothing held).
    mutating func apply(_ event: VortexEvent, origin: StoreOrigin, callStart: Int? = nil) -> Outcome {
        let outcome = place(event, origin: origin, callStart: callStart)
        if case .applied(let entity) = outcome {
            sequence += 1
            appliedAt[entity] = sequence
        }
        return outcome
    }

    private mutating func place(_ event: VortexEvent, origin: StoreOrigin, callStart: Int?) -> Outcome {
        let kind = event.kind
        let rank = Rank(origin: origin, callStart: callStart, appliedAt: appliedAt)
        switch event {
        case .devicePresence(let output):
            guard let thing = output.thingName else { return .notKept }
            return Self.merge(&snapshot.devices[thing, default: DeviceState()].presence, output, rank, Entity(kind: kind, name: thing))
        case .deviceRecording(let output):
            guard let thing = output.thingName else { return .notKept }
            return Self.merge(&snapshot.devices[thing, default: DeviceState()].recording, output, rank, Entity(kind: kind, name: thing))
        case .deviceFirmware(let output):
            guard let thing = output.thingName else { return .notKept }
            return Self.merge(&snapshot.devices[thing, default: DeviceState()].firmware, output, rank, Entity(kind: kind, name: thing))
        case .licensePhase(let output): return Self.merge(&snapshot.organization.license, output, rank, Entity(kind: kind, name: ""))
        case .plan(let output): return Self.merge(&snapshot.organization.plan, output, rank, Entity(kind: kind, name: ""))
        case .aiSettings(let output): return Self.merge(&snapshot.organization.aiSettings, output, rank, Entity(kind: kind, name: ""))
        case .roleChanged(let output): return Self.merge(&snapshot.roleChange, output, rank, Entity(kind: kind, name: ""))
        case .tokenRevoked(let output): return Self.merge(&snapshot.tokenRevocation, output, rank, Entity(kind: kind, name: ""))
        case .archiveState: return .notKept
        }
    }

    /// Where an event stands against what was applied before it, when timestamps cannot tell.
    private struct Rank {
        let origin: StoreOrigin
        let callStart: Int?
        let appliedAt: [Entity: Int]

        /// Whether the event may replace `entity`'s held value on a tie or a missing timestamp: a live event always (live
        /// events arrive in order); a backfilled one only when the held value was applied before its call started.
        func replacesOnTie(_ entity: Entity) -> Bool {
            guard origin == .backfill else { return true }
            guard let callStart else { return false }
            return appliedAt[entity, default: 0] <= callStart
        }
    }

    private static func merge<Payload: VortexEventPayload>(
        _ slot: inout StoreValue<Payload>?, _ payload: Payload, _ rank: Rank, _ entity: Entity
    ) -> Outcome {
        let instant = payload.date
        if let held = slot {
            if held.payload == payload { return .duplicate }
            if let old = held.instant, let new = instant {
                if new < old { return .older }
                if new == old, !rank.replacesOnTie(entity) { return .older }
            } else if !rank.replacesOnTie(entity) {
                return .older
            }
        }
        slot = StoreValue(payload: payload, instant: instant, origin: rank.origin)
        return .applied(entity)
    }
}
