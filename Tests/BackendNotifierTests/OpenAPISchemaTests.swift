import BackendNotifier
import Foundation
import OpenAPIKit
import Testing
import Yams

/// Checks `docs/openapi/vortex-events.yaml` against the Swift models: every schema property exists in its model
/// with the right optionality and a compatible type (found by decoding probes, not by a hand-kept table), the
/// examples decode into the expected values, and the required lists, enums and channels agree with the code.
@Suite("OpenAPI schema ↔ models")
struct OpenAPISchemaTests {
    // MARK: - The table

    /// One payload schema and its model: a fully populated instance (to learn the model's keys) and the value
    /// the schema's example must decode into.
    struct Probe: Sendable, CustomTestStringConvertible {
        var kind: VortexEventKind
        /// Every stored property set; its encoding lists the model's JSON keys and a value of the right type each.
        var full: VortexEvent
        /// The value of the schema's example.
        var example: VortexEvent
        /// Keys the model has beyond the schema (legacy GraphQL names).
        var legacyOnlyKeys: Set<String> = []

        var schemaName: String { kind.payloadType.modelName }
        var testDescription: String { schemaName }
    }

    /// Required by the schema and by ``VortexEventDecoder/decode(_:from:)``, optional in the Swift models on purpose:
    /// legacy GraphQL payloads lack them, and the legacy decoding does not require them.
    static let optionalForLegacyPayloads: Set<String> = ["eventType", "timestamp"]

    static let options: JSONValue = ["mode": "strict", "threshold": 0.5, "zones": ["a", 2, nil]]

    static let probes: [Probe] = [
        Probe(
            kind: .devicePresence,
            full: .devicePresence(
                DevicePresenceOutput(
                    eventType: "device/presenceChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o", siteId: "s",
                    thingName: "t", derivant: "d", mac: "m", deviceGroupID: "g", value: true)),
            example: .devicePresence(
                DevicePresenceOutput(
                    eventType: "device/presenceChanged", timestamp: "2025-01-15T10:30:00.123Z", orgId: "org-7f3a2c",
                    siteId: "site-19b4", thingName: "vx-cam-a1b2c3d4", derivant: "VX-C200", mac: "A4:CF:12:9B:3E:01",
                    value: true)),
            legacyOnlyKeys: ["deviceGroupID"]),
        Probe(
            kind: .deviceRecording,
            full: .deviceRecording(
                DeviceRecordingOutput(
                    eventType: "device/recordingStateChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o",
                    siteId: "s", thingName: "t", derivant: "d", mac: "m", deviceGroupID: "g", value: true)),
            example: .deviceRecording(
                DeviceRecordingOutput(
                    eventType: "device/recordingStateChanged", timestamp: "2025-01-15T10:31:05Z", orgId: "org-7f3a2c",
                    siteId: "site-19b4", thingName: "vx-cam-a1b2c3d4", derivant: "VX-C200", mac: "A4:CF:12:9B:3E:01",
                    value: false)),
            legacyOnlyKeys: ["deviceGroupID"]),
        Probe(
            kind: .deviceFirmware,
            full: .deviceFirmware(
                DeviceFirmwareOutput(
                    eventType: "device/firmwareUpdated", timestamp: "2025-01-01T00:00:00Z", orgId: "o", siteId: "s",
                    thingName: "t", derivant: "d", mac: "m", deviceGroupID: "g", value: 7)),
            example: .deviceFirmware(
                DeviceFirmwareOutput(
                    eventType: "device/firmwareUpdated", timestamp: "2025-01-15T11:02:47.5+09:00", orgId: "org-7f3a2c",
                    siteId: "site-19b4", thingName: "vx-cam-a1b2c3d4", derivant: "VX-C200", mac: "A4:CF:12:9B:3E:01",
                    value: 3)),
            legacyOnlyKeys: ["deviceGroupID"]),
        Probe(
            kind: .archiveState,
            full: .archiveState(
                ArchiveStateOutput(
                    eventType: "archive/stateChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o", siteId: "s",
                    thingName: "t", derivant: "d", mac: "m", deviceGroupID: "g", status: .failed, videoLength: 1.25,
                    videoSize: 10, cloudSize: 9, hasH265: false, createdAt: "2025-01-01T00:00:00Z")),
            example: .archiveState(
                ArchiveStateOutput(
                    eventType: "archive/stateChanged", timestamp: "2025-01-15T12:00:01.250Z", orgId: "org-7f3a2c",
                    siteId: "site-19b4", thingName: "vx-cam-a1b2c3d4", derivant: "VX-C200", mac: "A4:CF:12:9B:3E:01",
                    status: .ready, videoLength: 92.5, videoSize: 48_234_112, cloudSize: 47_185_920, hasH265: true,
                    createdAt: "2025-01-15T11:58:20Z")),
            legacyOnlyKeys: ["deviceGroupID"]),
        Probe(
            kind: .licensePhase,
            full: .licensePhase(
                LicenseStateOutput(
                    eventType: "organization/licensePhaseChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o",
                    licensePhase: .invalid)),
            example: .licensePhase(
                LicenseStateOutput(
                    eventType: "organization/licensePhaseChanged", timestamp: "2025-02-01T00:00:00Z",
                    orgId: "org-7f3a2c", licensePhase: .gracePeriod))),
        Probe(
            kind: .plan,
            full: .plan(
                PlanStateOutput(
                    eventType: "organization/planChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o",
                    isFreePlan: true)),
            example: .plan(
                PlanStateOutput(
                    eventType: "organization/planChanged", timestamp: "2025-02-03T08:15:30.000Z", orgId: "org-7f3a2c",
                    isFreePlan: false))),
        Probe(
            kind: .aiSettings,
            full: .aiSettings(
                AISettingsOutput(
                    eventType: "organization/aiSettingsChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o",
                    aiControlSetting: AIControlSetting(uuid: "u", termsAgreement: true, options: options))),
            example: .aiSettings(
                AISettingsOutput(
                    eventType: "organization/aiSettingsChanged", timestamp: "2025-02-03T09:00:12.345Z",
                    orgId: "org-7f3a2c",
                    aiControlSetting: AIControlSetting(
                        uuid: "6f1c2b9e-4d3a-4e8f-9a7b-2c5d8e1f0a3b", termsAgreement: true,
                        options: [
                            "personDetection": true, "vehicleDetection": false, "sensitivity": 0.75,
                            "zones": ["entrance", "parking"],
                        ])))),
        Probe(
            kind: .roleChanged,
            full: .roleChanged(
                RoleChangeOutput(
                    eventType: "user/roleChanged", timestamp: "2025-01-01T00:00:00Z", reason: "r")),
            example: .roleChanged(
                RoleChangeOutput(
                    eventType: "user/roleChanged", timestamp: "2025-02-04T14:22:09Z",
                    reason: "Role changed from Viewer to Admin by an organization owner"))),
        Probe(
            kind: .tokenRevoked,
            full: .tokenRevoked(
                UserTokenRevokeOutput(
                    eventType: "user/tokenRevoked", timestamp: "2025-01-01T00:00:00Z", userId: "u",
                    revokedAt: "2025-01-01T00:00:00Z", reason: .passwordChanged, requestId: "q")),
            example: .tokenRevoked(
                UserTokenRevokeOutput(
                    eventType: "user/tokenRevoked", timestamp: "2025-02-05T06:45:00.900Z",
                    userId: "us-east-1:3f2a9c4e-8b1d-4f6a-9e2c-7d5b1a0c8e4f", revokedAt: "2025-02-05T06:44:59Z",
                    reason: .passwordChanged, requestId: "req-0b7e4d2a91"))),
    ]

    // MARK: - Loading

    static let documentURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi/vortex-events.yaml")

    static func loadDocument() throws -> OpenAPI.Document {
        let text = try String(contentsOf: documentURL, encoding: .utf8)
        return try YAMLDecoder().decode(OpenAPI.Document.self, from: text)
    }

    static func schema(named name: String, in document: OpenAPI.Document) throws -> JSONSchema {
        let key = try #require(OpenAPI.ComponentKey(rawValue: name))
        return try #require(document.components.schemas[key], "components.schemas has no \(name)")
    }

    /// Follows `$ref` and `anyOf`/`oneOf` `[X, null]`, reporting whether `null` is allowed on the way.
    static func resolve(_ schema: JSONSchema, in document: OpenAPI.Document) throws -> (schema: JSONSchema, nullable: Bool) {
        switch schema.value {
        case .reference(let reference, _):
            let name = try #require(reference.name)
            let target = try resolve(try Self.schema(named: name, in: document), in: document)
            return (target.schema, target.nullable || schema.nullable)
        case .any(of: let subschemas, core: _), .one(of: let subschemas, core: _):
            let nonNull = subschemas.filter { $0.jsonType != .null }
            try #require(nonNull.count == 1, "only [X, null] unions are supported")
            let target = try resolve(nonNull[0], in: document)
            return (target.schema, target.nullable || schema.nullable || nonNull.count < subschemas.count)
        default:
            return (schema, schema.nullable)
        }
    }

    // MARK: - Probing the model by decoding

    static func decodes(_ kind: VortexEventKind, _ object: [String: JSONValue]) throws -> Bool {
        let data = try JSONEncoder().encode(JSONValue.object(object))
        if case .success = VortexEventDecoder().decode(kind, from: data) { return true }
        return false
    }

    /// Whether `object` decodes as the model of `kind` the way legacy GraphQL payloads are decoded.
    static func decodesAsLegacy(_ kind: VortexEventKind, _ object: [String: JSONValue]) throws -> Bool {
        func decodes<Model: VortexEventPayload>(_ model: Model.Type, _ data: Data) -> Bool {
            if case .success = VortexEventDecoder().decodeLegacy(model, from: data) { return true }
            return false
        }
        return decodes(kind.payloadType, try JSONEncoder().encode(JSONValue.object(object)))
    }

    static func replacing(_ object: [String: JSONValue], at path: [String], with value: JSONValue?) -> [String: JSONValue] {
        var object = object
        guard let head = path.first else { return object }
        if path.count == 1 {
            object[head] = value
        } else if case .object(let inner)? = object[head] {
            object[head] = .object(replacing(inner, at: Array(path.dropFirst()), with: value))
        }
        return object
    }

    static func value(in object: [String: JSONValue], at path: [String]) -> JSONValue? {
        var current: JSONValue = .object(object)
        for key in path {
            guard let next = current[key] else { return nil }
            current = next
        }
        return current
    }

    /// A value of the wrong JSON type for `type`.
    static func wrongValue(for type: JSONType) -> JSONValue {
        type == .string ? .number(42) : .string("not-a-\(type.rawValue)")
    }

    /// Checks every property of `object` (found at `path` inside the full payload) against the model.
    static func checkProperties(
        of object: JSONSchema.ObjectContext, at path: [String], probe: Probe, full: [String: JSONValue],
        document: OpenAPI.Document
    ) throws {
        let model = probe.schemaName
        for (name, propertySchema) in object.properties {
            let fieldPath = path + [name]
            let field = fieldPath.joined(separator: ".")
            let fullValue = try #require(
                value(in: full, at: fieldPath), "schema property \(field) is not a JSON key of \(model)")
            let (resolved, nullable) = try resolve(propertySchema, in: document)

            // Optionality: absent and null, as the schema allows.
            let absentDecodes = try decodes(probe.kind, replacing(full, at: fieldPath, with: nil))
            let nullDecodes = try decodes(probe.kind, replacing(full, at: fieldPath, with: .null))
            let requiredInSchema = object.requiredProperties.contains(name)
            if !requiredInSchema {
                #expect(absentDecodes, "\(model).\(field) is optional in the schema but required by the model")
            } else {
                #expect(!absentDecodes, "\(model).\(field) is required in the schema but optional in the model")
                #expect(!nullDecodes, "\(model).\(field) is required in the schema but the model accepts null")
                if path.isEmpty && optionalForLegacyPayloads.contains(name) {
                    #expect(
                        try decodesAsLegacy(probe.kind, replacing(full, at: fieldPath, with: nil)),
                        "\(model).\(field) must stay optional for legacy payloads")
                }
            }
            if nullable {
                #expect(nullDecodes, "\(model).\(field) is nullable in the schema but the model rejects null")
            }

            // Type: the model's own encoding has the schema's type, a value of that type decodes, another does not.
            guard let type = resolved.jsonType else {
                // No type (such as `options`): any JSON value must decode.
                for sample: JSONValue in ["text", 1.5, true, ["a", 1], ["k": ["n": nil]]] {
                    #expect(
                        try decodes(probe.kind, replacing(full, at: fieldPath, with: sample)),
                        "\(model).\(field) is untyped in the schema but rejects \(sample)")
                }
                continue
            }
            switch (type, fullValue) {
            case (.string, .string), (.boolean, .bool), (.number, .number), (.object, .object):
                break
            case (.integer, .number(let number)):
                #expect(number.rounded() == number, "\(model).\(field) encodes a non-integral number")
                #expect(
                    !(try decodes(probe.kind, replacing(full, at: fieldPath, with: 1.5))),
                    "\(model).\(field) is an integer in the schema but the model accepts 1.5")
            default:
                Issue.record("\(model).\(field): schema type \(type.rawValue), the model encodes \(fullValue)")
            }
            #expect(
                !(try decodes(probe.kind, replacing(full, at: fieldPath, with: wrongValue(for: type)))),
                "\(model).\(field) is \(type.rawValue) in the schema but the model accepts \(wrongValue(for: type))")
            if type == .number {
                #expect(
                    try decodes(probe.kind, replacing(full, at: fieldPath, with: 1.5)),
                    "\(model).\(field) is a number in the schema but the model rejects 1.5")
            }

            // Enums: every documented value decodes and encodes back unchanged.
            for allowed in resolved.allowedValues ?? [] {
                guard let raw = allowed.value as? String else { continue }
                let object = replacing(full, at: fieldPath, with: .string(raw))
                let data = try JSONEncoder().encode(JSONValue.object(object))
                let event = try VortexEventDecoder().decode(probe.kind, from: data).get()
                let reencoded = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(event))
                #expect(reencoded == .object(object), "\(model).\(field) = \(raw) does not round-trip")
            }

            // Nested objects: the same checks, one level down.
            if let nested = resolved.objectContext {
                try checkProperties(of: nested, at: fieldPath, probe: probe, full: full, document: document)
            }
        }
    }

    static func encodedObject(_ event: VortexEvent) throws -> [String: JSONValue] {
        let value = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(event))
        guard case .object(let object) = value else {
            Issue.record("\(event.kind) does not encode as a JSON object")
            return [:]
        }
        return object
    }

    static func isNil(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    // MARK: - Tests

    @Test("every schema property exists in its model with the right optionality and type", arguments: probes)
    func schemaPropertiesMatchModel(_ probe: Probe) throws {
        let document = try Self.loadDocument()
        let schema = try Self.schema(named: probe.schemaName, in: document)
        let object = try #require(schema.objectContext, "\(probe.schemaName) is not an object schema")
        #expect(schema.jsonType == .object)

        // The probe really sets every stored property, so its encoding lists every key of the model.
        let mirror = Mirror(reflecting: probe.full.payload)
        #expect(mirror.children.allSatisfy { !Self.isNil($0.value) }, "the full \(probe.schemaName) leaves a property nil")
        let full = try Self.encodedObject(probe.full)
        #expect(full.count == mirror.children.count)
        #expect(try Self.decodes(probe.kind, full))

        try Self.checkProperties(of: object, at: [], probe: probe, full: full, document: document)
    }

    @Test("the model has no field the schema lacks, except documented legacy names", arguments: probes)
    func modelFieldsAreInSchema(_ probe: Probe) throws {
        let document = try Self.loadDocument()
        let object = try #require(try Self.schema(named: probe.schemaName, in: document).objectContext)
        let schemaKeys = Set(object.properties.keys)
        let modelKeys = Set(try Self.encodedObject(probe.full).keys)
        #expect(modelKeys.subtracting(schemaKeys) == probe.legacyOnlyKeys)
        #expect(probe.kind.payloadType.knownFields == modelKeys)
    }

    @Test("every schema example decodes into its model with the expected values", arguments: probes)
    func examplesDecode(_ probe: Probe) throws {
        let document = try Self.loadDocument()
        let schema = try Self.schema(named: probe.schemaName, in: document)
        try #require(schema.examples.count == 1, "\(probe.schemaName) should carry one example")
        let data = try JSONEncoder().encode(schema.examples[0])
        let decoder = VortexEventDecoder()

        let event = try decoder.decode(probe.kind, from: data).get()
        #expect(event == probe.example)
        #expect(event.eventType == probe.kind.eventType)
        #expect(event.date != nil, "the example's timestamp is not ISO 8601")
        #expect(decoder.unknownFields(in: data, for: probe.kind) == [])
        #expect(try decoder.decode(routingByEventTypeIn: data).get() == probe.example)
        // Nothing of the example is lost: the model encodes back to the same JSON.
        let original = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(event)) == original)
    }

    @Test("required lists: eventType and timestamp everywhere, plus userId and revokedAt for revocation")
    func requiredLists() throws {
        let document = try Self.loadDocument()
        for kind in VortexEventKind.allCases {
            let name = kind.payloadType.modelName
            let object = try #require(try Self.schema(named: name, in: document).objectContext)
            let expected: Set<String> =
                kind == .tokenRevoked
                ? ["eventType", "timestamp", "userId", "revokedAt"] : ["eventType", "timestamp"]
            #expect(Set(object.requiredProperties) == expected, "\(name)")
            let timestamp = try #require(object.properties["timestamp"])
            #expect(timestamp.jsonType == .string && timestamp.formatString == "date-time", "\(name).timestamp")
            let eventType = try #require(object.properties["eventType"])
            #expect(!timestamp.nullable && !eventType.nullable, "\(name)")
        }
        let setting = try #require(try Self.schema(named: "AIControlSetting", in: document).objectContext)
        #expect(setting.requiredProperties.isEmpty)
        let names = Set(document.components.schemas.keys.map(\.rawValue))
        #expect(names == Set(VortexEventKind.allCases.map { $0.payloadType.modelName } + ["AIControlSetting"]))
    }

    @Test("enums, the firmware range and eventType constants agree with the code")
    func enumsAndRanges() throws {
        let document = try Self.loadDocument()
        func allowed(_ schema: String, _ property: String) throws -> [String?] {
            let object = try #require(try Self.schema(named: schema, in: document).objectContext)
            let values = try #require(object.properties[property]?.allowedValues, "\(schema).\(property) has no enum")
            return values.map { $0.value as? String }
        }
        #expect(try allowed("LicenseStateOutput", "licensePhase") == LicensePhase.knownCases.map(\.rawValue) + [nil])
        #expect(try allowed("UserTokenRevokeOutput", "reason") == TokenRevokeReason.knownCases.map(\.rawValue) + [nil])
        #expect(try allowed("ArchiveStateOutput", "status") == ArchiveStatus.knownCases.map(\.rawValue) + [nil])
        for kind in VortexEventKind.allCases {
            #expect(try allowed(kind.payloadType.modelName, "eventType") == [kind.eventType])
        }

        let firmware = try #require(try Self.schema(named: "DeviceFirmwareOutput", in: document).objectContext)
        let state = try #require(firmware.properties["fwUpdateState"]?.integerContext)
        #expect(state.minimum?.value == DeviceFirmwareOutput.fwUpdateStateRange.lowerBound)
        #expect(state.maximum?.value == DeviceFirmwareOutput.fwUpdateStateRange.upperBound)
        #expect(state.minimum?.exclusive == false && state.maximum?.exclusive == false)
    }

    @Test("one webhook per channel, naming the channel, the eventType and the payload schema")
    func channels() throws {
        let document = try Self.loadDocument()
        #expect(document.openAPIVersion.rawValue.hasPrefix("3.1"))
        #expect(document.webhooks.count == VortexEventKind.allCases.count)
        let description = try #require(document.info.description)
        for kind in VortexEventKind.allCases {
            let channel = "vortex-app/user/{userId}/\(kind.channelSuffix)"
            #expect(description.contains("`\(channel)`"), "info.description does not name \(channel)")
            let item = try #require(document.webhooks[kind.rawValue]?.b, "no webhook \(kind.rawValue)")
            #expect(item.vendorExtensions["x-channel"]?.value as? String == channel)
            #expect(item.vendorExtensions["x-event-type"]?.value as? String == kind.eventType)
            let body = try #require(item.post?.requestBody?.b)
            let schema = try #require(body.content[.json]?.b?.schema)
            guard case .reference(let reference, _) = schema.value else {
                Issue.record("\(kind.rawValue): the body is not a $ref")
                continue
            }
            #expect(reference.name == kind.payloadType.modelName)
        }
    }

    @Test("the document's schemas parse without warnings")
    func noWarnings() throws {
        let document = try Self.loadDocument()
        for (name, schema) in document.components.schemas {
            #expect(schema.warnings.isEmpty, "\(name.rawValue): \(schema.warnings)")
            for (property, subschema) in schema.objectContext?.properties ?? [:] {
                #expect(subschema.warnings.isEmpty, "\(name.rawValue).\(property): \(subschema.warnings)")
            }
        }
    }
}
