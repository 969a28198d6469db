/// The legacy merged device event: the payload of the GraphQL subscription `subscribeDeviceState` and the value
/// of the merged API's `deviceValues()`, on either transport.
///
/// One legacy payload may carry several changes at once (`online`, `recording`, `fwUpdateState`); ``split()``
/// turns it into the nine-kind events, and the `init(_:)` initializers turn a nine-kind device event back into
/// this shape. `eventType`, `timestamp`, `orgId` and `siteId` are the new schema's fields, optional here.
public struct DeviceStateOutput: VortexDevicePayload {
    /// The device MAC address.
    public var mac: String?
    /// The device model identifier.
    public var derivant: String?
    /// Whether the device is online; present on presence changes.
    public var online: Bool?
    /// Whether the device is recording; present on recording changes.
    public var recording: Bool?
    /// The firmware update state (documented -1...14); present on firmware changes.
    public var fwUpdateState: Int?
    /// The AWS IoT thing name (device identifier).
    public var thingName: String?
    /// The device group (the legacy name of `siteId`).
    public var deviceGroupID: String?
    /// The organization identifier (new schema).
    public var orgId: String?
    /// The site (device group) identifier (new schema).
    public var siteId: String?
    /// The event type (new schema), such as `device/presenceChanged`; decides ``split()`` when present.
    public var eventType: String?
    /// When the event occurred, ISO 8601 (new schema).
    public var timestamp: String?

    /// Creates a payload.
    public init(
        mac: String? = nil,
        derivant: String? = nil,
        online: Bool? = nil,
        recording: Bool? = nil,
        fwUpdateState: Int? = nil,
        thingName: String? = nil,
        deviceGroupID: String? = nil,
        orgId: String? = nil,
        siteId: String? = nil,
        eventType: String? = nil,
        timestamp: String? = nil
    ) {
        self.mac = mac
        self.derivant = derivant
        self.online = online
        self.recording = recording
        self.fwUpdateState = fwUpdateState
        self.thingName = thingName
        self.deviceGroupID = deviceGroupID
        self.orgId = orgId
        self.siteId = siteId
        self.eventType = eventType
        self.timestamp = timestamp
    }

    /// Its keys are the device vocabulary's, every one of them.
    typealias CodingKeys = DeviceKey

    /// Every JSON key this model decodes.
    public static let knownFields: Set<String> = Set(CodingKeys.allCases.map(\.rawValue))

    /// `false` only when `fwUpdateState` is present and outside ``DeviceFirmwareOutput/fwUpdateStateRange``.
    public var isFirmwareStateInRange: Bool {
        fwUpdateState.map(DeviceFirmwareOutput.fwUpdateStateRange.contains) ?? true
    }
}

// MARK: - Merged → split

extension DeviceStateOutput {
    /// The nine-kind events this merged payload stands for.
    ///
    /// - When `eventType` names a device kind (``VortexEventKind/init(eventType:)``), exactly that one event,
    ///   whatever other fields are present (only that kind's field is carried).
    /// - Otherwise (no `eventType`, or one that is not a device kind), one event per field present, in this
    ///   order: `online` → presence, `recording` → recording, `fwUpdateState` → firmware. No such field: `[]`.
    ///
    /// Every event carries `timestamp` and the device fields over unchanged; its `eventType` is the payload's,
    /// or the kind's own ``VortexEventKind/eventType`` when the payload had none.
    public func split() -> [VortexEvent] {
        if let eventType, let kind = VortexEventKind(eventType: eventType) {
            switch kind {
            case .devicePresence: return [.devicePresence(presence)]
            case .deviceRecording: return [.deviceRecording(recordingOutput)]
            case .deviceFirmware: return [.deviceFirmware(firmware)]
            default: break
            }
        }
        var events: [VortexEvent] = []
        if online != nil { events.append(.devicePresence(presence)) }
        if recording != nil { events.append(.deviceRecording(recordingOutput)) }
        if fwUpdateState != nil { events.append(.deviceFirmware(firmware)) }
        return events
    }

    /// The event of the device kind whose field is `value`: the shared fields copied, `eventType` stamped.
    private func event<Field: DeviceEventField>(_ kind: VortexEventKind, _ value: Field.Value?) -> DeviceEventOutput<Field> {
        var event = DeviceEventOutput<Field>(copying: self, value: value)
        event.eventType = eventType ?? kind.eventType
        return event
    }

    private var presence: DevicePresenceOutput { event(.devicePresence, online) }
    private var recordingOutput: DeviceRecordingOutput { event(.deviceRecording, recording) }
    private var firmware: DeviceFirmwareOutput { event(.deviceFirmware, fwUpdateState) }
}

// MARK: - Split → merged

extension DeviceStateOutput {
    /// The merged form of a presence event: `online` set, `recording` and `fwUpdateState` `nil`, every other
    /// field (including `eventType`, `timestamp`, `siteId` and `deviceGroupID`) copied as is.
    public init(_ presence: DevicePresenceOutput) {
        self.init(copying: presence)
        online = presence.online
    }

    /// The merged form of a recording event: `recording` set, `online` and `fwUpdateState` `nil`, every other
    /// field copied as is.
    public init(_ recording: DeviceRecordingOutput) {
        self.init(copying: recording)
        self.recording = recording.recording
    }

    /// The merged form of a firmware event: `fwUpdateState` set, `online` and `recording` `nil`, every other
    /// field copied as is.
    public init(_ firmware: DeviceFirmwareOutput) {
        self.init(copying: firmware)
        fwUpdateState = firmware.fwUpdateState
    }

    /// The shared fields of `fields`, no kind's field.
    private init(copying fields: some DevicePayloadFields) {
        self.init(
            mac: fields.mac, derivant: fields.derivant, thingName: fields.thingName, deviceGroupID: fields.deviceGroupID,
            orgId: fields.orgId, siteId: fields.siteId, eventType: fields.eventType, timestamp: fields.timestamp)
    }

    /// The merged form of a device event; `nil` for the other six kinds.
    public init?(_ event: VortexEvent) {
        switch event {
        case .devicePresence(let value): self.init(value)
        case .deviceRecording(let value): self.init(value)
        case .deviceFirmware(let value): self.init(value)
        default: return nil
        }
    }
}

extension DeviceStateOutput: DevicePayloadFields {
    /// Decodes every device key; absent and `null` are `nil`, unknown keys are ignored.
    public init(from decoder: any Decoder) throws {
        try self.init(decoding: decoder)
    }

    static var blank: Self { Self() }

    mutating func readKindField(_ key: DeviceKey, _ value: some DeviceMemberValue) throws {
        switch key {
        case .online: online = try value.optional(Bool.self)
        case .recording: recording = try value.optional(Bool.self)
        case .fwUpdateState: fwUpdateState = try value.optional(Int.self)
        default: break
        }
    }
}
