/// The eight fields every device model shares, settable, and the device models' decoding, written once for both
/// readers: ``FlatJSONDecoder`` over the payload's bytes (the fast path nearly every event takes) and any `Decoder` (the
/// model's `Decodable` conformance, which `JSONDecoder` uses when the fast path does not apply, and to name what is
/// wrong). So the two agree by construction: the same keys, `null` as `nil`, unknown keys ignored. The notifier's router
/// renames through it too.
protocol DevicePayloadFields: Decodable {
    var eventType: String? { get set }
    var timestamp: String? { get set }
    var orgId: String? { get set }
    var siteId: String? { get set }
    var thingName: String? { get set }
    var derivant: String? { get set }
    var mac: String? { get set }
    var deviceGroupID: String? { get set }

    /// The model with every field `nil`, to read into.
    static var blank: Self { get }

    /// Reads `value` into the model's field for the kind field `key` (`online`, `recording` or `fwUpdateState`); a key
    /// the model has no field for is ignored.
    mutating func readKindField(_ key: DeviceKey, _ value: some DeviceMemberValue) throws
}

extension DevicePayloadFields {
    /// The model read member by member from `object`. `only`: of the kind fields, that kind's alone is read (the
    /// others are ignored, whatever they hold). A value the fast path cannot judge is ``FlatJSONDecoder/Unsupported``.
    init(flat object: FlatJSONDecoder.ObjectView, only kind: VortexEventKind? = nil) throws {
        self = .blank
        let kindField = kind?.deviceField
        for (member, key) in object.members {
            guard let key else { continue }
            try read(key, object.scalar(member), kindField: kindField)
        }
    }

    /// The model read from `decoder`, key by key in the vocabulary's order: the model's `Decodable` conformance.
    init(decoding decoder: any Decoder) throws {
        self = .blank
        let container = try decoder.container(keyedBy: DeviceKey.self)
        for key in DeviceKey.allCases where container.contains(key) {
            try read(key, DecodingContainerMember(container: container, key: key), kindField: nil)
        }
    }

    /// `kindField`: the one kind field to read, or `nil` for all of them.
    private mutating func read(_ key: DeviceKey, _ value: some DeviceMemberValue, kindField: DeviceKey?) throws {
        switch key {
        case .eventType: eventType = try value.optionalEventType()
        case .timestamp: timestamp = try value.optional(String.self)
        case .orgId: orgId = try value.optional(String.self)
        case .siteId: siteId = try value.optional(String.self)
        case .thingName: thingName = try value.optional(String.self)
        case .derivant: derivant = try value.optional(String.self)
        case .mac: mac = try value.optional(String.self)
        case .deviceGroupID: deviceGroupID = try value.optional(String.self)
        // Matched as patterns: `==` on the vocabulary's enum is a call through the witness table.
        case .online, .recording, .fwUpdateState:
            switch (kindField, key) {
            case (nil, _), (.online?, .online), (.recording?, .recording), (.fwUpdateState?, .fwUpdateState): try readKindField(key, value)
            default: break
            }
        }
    }
}
