import Foundation
import SubscriberCore
import VortexVocabulary

/// The current state of every entity, as the domain events published so far leave it: what `GET /vortex/state`
/// answers for an identity, and what a client that missed events must converge to once it has caught up.
///
/// Per entity and kind the newest event wins (by its `timestamp`; of two with the same instant, the later published):
/// devices by `thingName` (presence, recording, firmware), the organization (licence phase, plan, AI settings), and per
/// user the last role change and token revocation. Each value is the event as it was published (the same JSON object
/// a subscriber received). Archive events are history, not state: they are not kept. Device events without a
/// `thingName` name no entity and are not kept either.
final class EntityStateLedger: Sendable {
    private struct Entry: Sendable {
        let instant: Date
        let json: String
    }

    private struct Device: Sendable {
        var organization: String
        var deviceGroup: String
        var kinds: [VortexEventKind: Entry] = [:]
    }

    private struct State: Sendable {
        /// By organization, then thing name.
        var devices: [String: [String: Device]] = [:]
        var organizations: [String: [VortexEventKind: Entry]] = [:]
        var users: [String: [VortexEventKind: Entry]] = [:]
    }

    private let state = Locked(State())

    /// Records a published event (already validated and stamped); `json` is the event as published.
    func record(_ event: DomainEvent, json: String) {
        guard let instant = event.timestamp.flatMap(Self.instant) else { return }
        let entry = Entry(instant: instant, json: json)
        func newer(_ old: Entry?) -> Entry { old.map { $0.instant > instant ? $0 : entry } ?? entry }
        state.withLock { state in
            switch event.kind {
            case .devicePresence, .deviceRecording, .deviceFirmware:
                guard let org = event.orgId, let group = event.deviceGroupId,
                    case .string(let thing)? = event.payload[DeviceKey.thingName.rawValue]
                else { return }
                var device = state.devices[org, default: [:]][thing] ?? Device(organization: org, deviceGroup: group)
                device.deviceGroup = group
                device.kinds[event.kind] = newer(device.kinds[event.kind])
                state.devices[org, default: [:]][thing] = device
            case .licensePhase, .plan, .aiSettings:
                guard let org = event.orgId else { return }
                state.organizations[org, default: [:]][event.kind] = newer(state.organizations[org]?[event.kind])
            case .roleChanged, .tokenRevoked:
                guard let user = event.userId else { return }
                state.users[user, default: [:]][event.kind] = newer(state.users[user]?[event.kind])
            case .archiveState:
                return
            }
        }
    }

    /// The state `userId` of `organizationId` may see, as one JSON object:
    /// `{"organizationId":…,"userId":…,"devices":{THING:{KIND:EVENT,…},…},"organization":{KIND:EVENT,…},"user":{KIND:EVENT,…}}`
    /// with kinds by their names (`devicePresence`, `plan`, `roleChanged`, …) and keys sorted. Devices are those of
    /// the organization in a device group the user may see (``DirectoryUser/canSee(deviceGroup:in:)``; a user the
    /// directory does not list sees none).
    func state(organizationId: String, userId: String, directory: UserDirectory) -> String {
        let member = directory.user(id: userId)
        return state.withLock { state in
            let devices = (state.devices[organizationId] ?? [:])
                .filter { member?.canSee(deviceGroup: $0.value.deviceGroup, in: organizationId) ?? false }
                .sorted { $0.key < $1.key }
                .map { (key: $0.key, json: Self.object($0.value.kinds)) }
            return JSONString.object([
                (key: "organizationId", json: JSONString.quoted(organizationId)),
                (key: "userId", json: JSONString.quoted(userId)),
                (key: "devices", json: JSONString.object(devices)),
                (key: "organization", json: Self.object(state.organizations[organizationId] ?? [:])),
                (key: "user", json: Self.object(state.users[userId] ?? [:])),
            ])
        }
    }

    private static func object(_ kinds: [VortexEventKind: Entry]) -> String {
        JSONString.object(kinds.sorted { $0.key.rawValue < $1.key.rawValue }.map { (key: $0.key.rawValue, json: $0.value.json) })
    }

    /// An ISO 8601 timestamp, with or without fractional seconds (parse strategies are values: none is made per event).
    static func instant(_ text: String) -> Date? {
        (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }

    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()
}
