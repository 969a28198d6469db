import BackendNotifier
import Foundation
import RealtimeStore
import SubscriberCore

/// A store's state in the shape of `GET /vortex/state`:
/// `{"organizationId":…,"userId":…,"devices":{THING:{KIND:EVENT}},"organization":{KIND:EVENT},"user":{KIND:EVENT}}`,
/// each event written through its payload model with keys sorted. ``canonical(stateBody:)`` reads the backend's body
/// through the same models, so the two compare equal once the store is current (fields a model does not carry, such as
/// the `userId` the backend adds to a role change, are left out of both).
public enum StoreStateDocument {
    /// The store's state for the identity, as one JSON object.
    @MainActor
    public static func json(of store: RealtimeStore, organizationId: String, userId: String) throws -> String {
        var devices: [String: JSONValue] = [:]
        for (thing, device) in store.devices {
            var kinds: [String: JSONValue] = [:]
            kinds[VortexEventKind.devicePresence.rawValue] = try device.presence.map { try value(of: $0.payload) }
            kinds[VortexEventKind.deviceRecording.rawValue] = try device.recording.map { try value(of: $0.payload) }
            kinds[VortexEventKind.deviceFirmware.rawValue] = try device.firmware.map { try value(of: $0.payload) }
            devices[thing] = .object(kinds)
        }
        var organization: [String: JSONValue] = [:]
        organization[VortexEventKind.licensePhase.rawValue] = try store.organization.license.map { try value(of: $0.payload) }
        organization[VortexEventKind.plan.rawValue] = try store.organization.plan.map { try value(of: $0.payload) }
        organization[VortexEventKind.aiSettings.rawValue] = try store.organization.aiSettings.map { try value(of: $0.payload) }
        var user: [String: JSONValue] = [:]
        user[VortexEventKind.roleChanged.rawValue] = try store.roleChange.map { try value(of: $0.payload) }
        user[VortexEventKind.tokenRevoked.rawValue] = try store.tokenRevocation.map { try value(of: $0.payload) }
        return try SortedJSON.text(
            JSONValue.object([
                "organizationId": .string(organizationId), "userId": .string(userId), "devices": .object(devices),
                "organization": .object(organization), "user": .object(user),
            ]))
    }

    /// `GET /vortex/state`'s body, each event read through its payload model, in the form of ``json(of:organizationId:userId:)``.
    public static func canonical(stateBody: Data) throws -> String {
        guard case .object(var root) = try JSONDecoder().decode(JSONValue.self, from: stateBody) else {
            throw DrillError.backend("the state is not a JSON object")
        }
        let decoder = VortexEventDecoder()
        func through(_ holder: JSONValue?) throws -> JSONValue {
            guard case .object(let kinds)? = holder else { return .object([:]) }
            var read: [String: JSONValue] = [:]
            for (name, event) in kinds {
                guard let kind = VortexEventKind(rawValue: name) else { continue }
                read[name] = try value(of: decoder.decode(kind, from: JSONEncoder().encode(event)).get().payload)
            }
            return .object(read)
        }
        if case .object(let devices)? = root["devices"] {
            root["devices"] = .object(try devices.mapValues(through))
        }
        root["organization"] = try through(root["organization"])
        root["user"] = try through(root["user"])
        return try SortedJSON.text(JSONValue.object(root))
    }

    private static func value(of payload: any Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(payload))
    }
}
