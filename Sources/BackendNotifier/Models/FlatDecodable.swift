/// A payload model that ``FlatJSONDecoder`` fills member by member, without going through `Decoder`: the device
/// models, which carry nearly every event. Generic `Decoder` plumbing (boxed containers, coding keys built per field,
/// runtime type metadata) cost more than the decoding itself.
///
/// `init(flat:)` must decode exactly what the model's `Decodable` conformance decodes: every coding key, `null` as
/// `nil`, unknown keys ignored, a value of another type rejected (`FlatJSONDecoder.Unsupported`, so `JSONDecoder`
/// decides and reports). `FlatJSONDecoderTests` checks both agree, key by key and on seeded mutations.
protocol FlatDecodable: Decodable {
    init(flat object: FlatJSONDecoder.ObjectView) throws
}

/// A device payload the fast path fills member by member: the eight fields every device model shares are read in one
/// place (``readDeviceField(_:_:)``), each model reading only its own on top.
protocol FlatDevicePayload: FlatDecodable {
    var eventType: String? { get set }
    var timestamp: String? { get set }
    var orgId: String? { get set }
    var siteId: String? { get set }
    var thingName: String? { get set }
    var derivant: String? { get set }
    var mac: String? { get set }
    var deviceGroupID: String? { get set }
}

extension FlatDevicePayload {
    /// Reads `value` into the shared field named `key`; `false` when `key` names none of them.
    mutating func readDeviceField(_ key: FlatJSONDecoder.Key, _ value: FlatJSONDecoder.Value) throws -> Bool {
        switch key {
        case "eventType": eventType = try value.optionalString()
        case "timestamp": timestamp = try value.optionalString()
        case "orgId": orgId = try value.optionalString()
        case "siteId": siteId = try value.optionalString()
        case "thingName": thingName = try value.optionalString()
        case "derivant": derivant = try value.optionalString()
        case "mac": mac = try value.optionalString()
        case "deviceGroupID": deviceGroupID = try value.optionalString()
        default: return false
        }
        return true
    }
}
