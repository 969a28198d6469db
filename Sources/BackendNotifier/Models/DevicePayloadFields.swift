/// The eight fields every device model shares, settable: read from JSON in one place (``read(_:own:)``, each model's
/// `init(flat:)` reading only its own fields on top) and renamed in one place by the notifier's router.
protocol DevicePayloadFields {
    var eventType: String? { get set }
    var timestamp: String? { get set }
    var orgId: String? { get set }
    var siteId: String? { get set }
    var thingName: String? { get set }
    var derivant: String? { get set }
    var mac: String? { get set }
    var deviceGroupID: String? { get set }
}

extension DevicePayloadFields {
    /// Fills the fields from `object`: the shared ones here, the model's own through `own` (called for the kinds'
    /// fields, `online`, `recording` and `fwUpdateState`). Keys that are no ``DeviceKey`` are ignored.
    mutating func read(
        _ object: FlatJSONDecoder.ObjectView, own: (inout Self, DeviceKey, FlatJSONDecoder.Value) throws -> Void
    ) throws {
        for member in object.members {
            guard let key = DeviceKey(bytes: object.key(of: member).bytes) else { continue }
            let value = object.scalar(member)
            if try !readDeviceField(key, value) { try own(&self, key, value) }
        }
    }

    /// Reads `value` into the shared field named `key`; `false` when `key` is a kind's field instead.
    mutating func readDeviceField(_ key: DeviceKey, _ value: FlatJSONDecoder.Value) throws -> Bool {
        switch key {
        case .eventType: eventType = try value.optionalEventType()
        case .timestamp: timestamp = try value.optionalString()
        case .orgId: orgId = try value.optionalString()
        case .siteId: siteId = try value.optionalString()
        case .thingName: thingName = try value.optionalString()
        case .derivant: derivant = try value.optionalString()
        case .mac: mac = try value.optionalString()
        case .deviceGroupID: deviceGroupID = try value.optionalString()
        case .online, .recording, .fwUpdateState: return false
        }
        return true
    }
}
