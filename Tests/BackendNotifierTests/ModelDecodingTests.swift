import Foundation
import RealtimeTesting
import Testing

@testable import BackendNotifier

/// Decoding of the nine payloads and the legacy merged outputs from realistic JSON, tolerance (unknown fields,
/// missing optional fields, unknown enum values), readable failures, ISO 8601 dates, and the merged ↔ split
/// conversions between the legacy GraphQL shape and the nine kinds.
@Suite("Model decoding")
struct ModelDecodingTests {
    // MARK: - Fixtures

    static func fixture(_ name: String) throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"),
            "missing fixture \(name).json")
        return try Data(contentsOf: url)
    }

    static func object(_ data: Data) throws -> [String: JSONValue] {
        guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: data) else {
            Issue.record("not a JSON object")
            return [:]
        }
        return object
    }

    static func data(_ object: [String: JSONValue]) throws -> Data {
        try JSONEncoder().encode(JSONValue.object(object))
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }

    static let decoder = VortexEventDecoder()

    static let mac = "3C:71:BF:0D:22:9A"
    static let thing = "vx-cam-5e6f7a8b"

    /// What each `Fixtures/<kind>.json` decodes into.
    static let expected: [VortexEventKind: VortexEvent] = [
        .devicePresence: .devicePresence(
            DevicePresenceOutput(
                eventType: "device/presenceChanged", timestamp: "2025-03-10T08:15:42.318Z", orgId: "org-42c9e1",
                siteId: "site-0a7f", thingName: thing, derivant: "VX-D410", mac: mac, value: false)),
        .deviceRecording: .deviceRecording(
            DeviceRecordingOutput(
                eventType: "device/recordingStateChanged", timestamp: "2025-03-10T08:16:03Z", orgId: "org-42c9e1",
                siteId: nil, thingName: thing, derivant: "VX-D410", mac: mac, value: true)),
        .deviceFirmware: .deviceFirmware(
            DeviceFirmwareOutput(
                eventType: "device/firmwareUpdated", timestamp: "2025-03-10T17:20:11.5+09:00", orgId: "org-42c9e1",
                siteId: "site-0a7f", thingName: thing, derivant: "VX-D410", mac: mac, value: -1)),
        .archiveState: .archiveState(
            ArchiveStateOutput(
                eventType: "archive/stateChanged", timestamp: "2025-03-10T09:00:00.000Z", orgId: "org-42c9e1",
                siteId: "site-0a7f", thingName: thing, derivant: "VX-D410", mac: mac, status: .processing,
                videoLength: 300.04, videoSize: 157_286_400, cloudSize: nil, hasH265: false,
                createdAt: "2025-03-10T08:55:00Z")),
        .licensePhase: .licensePhase(
            LicenseStateOutput(
                eventType: "organization/licensePhaseChanged", timestamp: "2025-03-11T00:00:00Z", orgId: "org-42c9e1",
                licensePhase: .noticePeriod)),
        .plan: .plan(
            PlanStateOutput(
                eventType: "organization/planChanged", timestamp: "2025-03-11T00:05:00.120Z", orgId: "org-42c9e1",
                isFreePlan: true)),
        .aiSettings: .aiSettings(
            AISettingsOutput(
                eventType: "organization/aiSettingsChanged", timestamp: "2025-03-11T02:30:45.001Z", orgId: "org-42c9e1",
                aiControlSetting: AIControlSetting(
                    uuid: "0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a", termsAgreement: true,
                    options: [
                        "faceRecognition": false, "retentionDays": 30, "labels": ["person", "vehicle"], "schedule": nil,
                    ]))),
        .roleChanged: .roleChanged(
            RoleChangeOutput(
                eventType: "user/roleChanged", timestamp: "2025-03-12T10:00:00Z", reason: "ORGANIZATION_ROLE_UPDATED")),
        .tokenRevoked: .tokenRevoked(
            UserTokenRevokeOutput(
                eventType: "user/tokenRevoked", timestamp: "2025-03-12T10:05:00.250Z",
                userId: "us-east-1:9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4", revokedAt: "2025-03-12T10:04:59.990Z",
                reason: .passwordChanged, requestId: "req-7c1e0f5b22")),
    ]

    static let timestamp = "2025-01-01T00:00:00Z"

    /// What the new schema requires of `kind`: `eventType` and `timestamp`, and the revocation's `userId` and `revokedAt`.
    static func required(_ kind: VortexEventKind) -> [String: JSONValue] {
        var required: [String: JSONValue] = ["eventType": .string(kind.eventType), "timestamp": .string(timestamp)]
        if kind == .tokenRevoked {
            required["userId"] = "u-1"
            required["revokedAt"] = .string(timestamp)
        }
        return required
    }

    /// The value with every optional field `nil` (only the required fields set).
    static func empty(_ kind: VortexEventKind) -> VortexEvent {
        let (eventType, timestamp) = (kind.eventType, timestamp)
        return switch kind {
        case .devicePresence: .devicePresence(DevicePresenceOutput(eventType: eventType, timestamp: timestamp))
        case .deviceRecording: .deviceRecording(DeviceRecordingOutput(eventType: eventType, timestamp: timestamp))
        case .deviceFirmware: .deviceFirmware(DeviceFirmwareOutput(eventType: eventType, timestamp: timestamp))
        case .archiveState: .archiveState(ArchiveStateOutput(eventType: eventType, timestamp: timestamp))
        case .licensePhase: .licensePhase(LicenseStateOutput(eventType: eventType, timestamp: timestamp))
        case .plan: .plan(PlanStateOutput(eventType: eventType, timestamp: timestamp))
        case .aiSettings: .aiSettings(AISettingsOutput(eventType: eventType, timestamp: timestamp))
        case .roleChanged: .roleChanged(RoleChangeOutput(eventType: eventType, timestamp: timestamp))
        case .tokenRevoked:
            .tokenRevoked(UserTokenRevokeOutput(eventType: eventType, timestamp: timestamp, userId: "u-1", revokedAt: timestamp))
        }
    }

    // MARK: - The nine payloads

    @Test("each of the nine payloads decodes from realistic JSON", arguments: VortexEventKind.allCases)
    func decodesRealisticPayload(_ kind: VortexEventKind) throws {
        let json = try Self.fixture(kind.rawValue)
        let event = try Self.decoder.decode(kind, from: json).get()
        #expect(event == Self.expected[kind])
        #expect(event.kind == kind)
        #expect(event.eventType == kind.eventType)
        #expect(Self.decoder.unknownFields(in: json, for: kind) == [])
        // Routed by its eventType, as on a wildcard subscription, it is the same event.
        #expect(try Self.decoder.decode(routingByEventTypeIn: json).get() == event)
        // Encoding gives back the payload (nulls dropped, since nil and null mean the same).
        let original = try Self.object(json).filter { $0.value != .null }
        #expect(try Self.object(JSONEncoder().encode(event)) == original)
    }

    @Test("unknown fields are ignored and reported", arguments: VortexEventKind.allCases)
    func unknownFieldsIgnoredAndReported(_ kind: VortexEventKind) throws {
        var object = try Self.object(Self.fixture(kind.rawValue))
        object["zzBackendAddedLater"] = ["nested": [1, 2]]
        object["_debug"] = true
        let json = try Self.data(object)
        #expect(try Self.decoder.decode(kind, from: json).get() == Self.expected[kind])
        #expect(Self.decoder.unknownFields(in: json, for: kind) == ["_debug", "zzBackendAddedLater"])
    }

    @Test("unknownFields on legacy outputs and on JSON that is not an object")
    func unknownFieldsLegacy() throws {
        let organization = try Self.fixture("legacy-subscribeOrganizationState")
        #expect(Self.decoder.unknownFields(in: organization, as: OrganizationStateOutput.self) == [])
        let both = Self.data(#"{"AIControlSetting":{},"aiControlSetting":{},"region":"eu"}"#)
        #expect(Self.decoder.unknownFields(in: both, as: OrganizationStateOutput.self) == ["region"])
        let device = try Self.fixture("legacy-subscribeDeviceState")
        #expect(Self.decoder.unknownFields(in: device, as: DeviceStateOutput.self) == [])
        // The legacy field is unknown to the license model.
        #expect(Self.decoder.unknownFields(in: device, for: .licensePhase).contains("deviceGroupID"))
        #expect(Self.decoder.unknownFields(in: Self.data("[1,2]"), for: .plan) == [])
        #expect(Self.decoder.unknownFields(in: Self.data("nope"), for: .plan) == [])
    }

    @Test("missing or null optional fields decode as nil", arguments: VortexEventKind.allCases)
    func missingOptionalFields(_ kind: VortexEventKind) throws {
        let required = Self.required(kind)
        #expect(try Self.decoder.decode(kind, from: Self.data(required)).get() == Self.empty(kind))

        var allNull = required
        for field in kind.payloadType.knownFields where required[field] == nil {
            allNull[field] = .null
        }
        #expect(allNull.count == kind.payloadType.knownFields.count)
        #expect(try Self.decoder.decode(kind, from: Self.data(allNull)).get() == Self.empty(kind))
    }

    // MARK: - Enums

    @Test("unknown enum values decode as .unknown and encode back verbatim")
    func unknownEnumValues() throws {
        let license = try Self.decoder.decodeLegacy(
            LicenseStateOutput.self, from: Self.data(#"{"licensePhase":"Suspended"}"#)
        ).get()
        #expect(license.licensePhase == .unknown("Suspended"))
        #expect(license.licensePhase?.isKnown == false)

        let revoke = try Self.decoder.decodeLegacy(
            UserTokenRevokeOutput.self,
            from: Self.data(#"{"userId":"u","revokedAt":"2025-01-01T00:00:00Z","reason":"ADMIN_FORCED_SIGN_OUT"}"#)
        ).get()
        #expect(revoke.reason == .unknown("ADMIN_FORCED_SIGN_OUT"))

        let output = try Self.decoder.decodeLegacy(ArchiveStateOutput.self, from: Self.data(#"{"status":"Archived"}"#)).get()
        #expect(output.status == .unknown("Archived"))
        #expect(String(decoding: try JSONEncoder().encode(output), as: UTF8.self) == #"{"status":"Archived"}"#)

        let organization = try Self.decoder.decodeLegacy(
            OrganizationStateOutput.self, from: Self.data(#"{"licensePhase":"Frozen","isFreePlan":true}"#)
        ).get()
        #expect(organization.licensePhase == .unknown("Frozen"))
        #expect(organization.isFreePlan == true)

        // Matching is exact: a differently cased value is unknown, not silently mapped.
        #expect(LicensePhase(rawValue: "valid") == .unknown("valid"))
    }

    @Test("known enum values round-trip through their raw strings")
    func knownEnumValues() {
        #expect(
            LicensePhase.knownCases.map(\.rawValue)
                == ["SetupStatus", "Valid", "NoticePeriod", "GracePeriod", "RenewalOverdue", "Invalid"])
        for phase in LicensePhase.knownCases {
            #expect(LicensePhase(rawValue: phase.rawValue) == phase && phase.isKnown)
        }
        #expect(TokenRevokeReason(rawValue: "PASSWORD_CHANGED") == .passwordChanged)
        #expect(TokenRevokeReason.passwordChanged.rawValue == "PASSWORD_CHANGED")
        for status in ArchiveStatus.knownCases {
            #expect(ArchiveStatus(rawValue: status.rawValue) == status && status.isKnown)
        }
        #expect(ArchiveStatus.unknown("X").rawValue == "X")
    }

    // MARK: - Failures

    struct Failure: Sendable, CustomTestStringConvertible {
        var kind: VortexEventKind
        var json: String
        var field: String
        var expected: String?
        var testDescription: String { "\(kind.rawValue) \(json)" }
    }

    static let failures: [Failure] = [
        Failure(kind: .devicePresence, json: #"{"online":"yes"}"#, field: "online", expected: "boolean"),
        Failure(kind: .deviceRecording, json: #"{"recording":1}"#, field: "recording", expected: "boolean"),
        Failure(kind: .deviceFirmware, json: #"{"fwUpdateState":"3"}"#, field: "fwUpdateState", expected: "integer"),
        Failure(kind: .deviceFirmware, json: #"{"fwUpdateState":2.5}"#, field: "fwUpdateState", expected: nil),
        Failure(kind: .archiveState, json: #"{"status":3}"#, field: "status", expected: "string"),
        Failure(kind: .archiveState, json: #"{"videoLength":"long"}"#, field: "videoLength", expected: "number"),
        Failure(kind: .archiveState, json: #"{"mac":["AA"]}"#, field: "mac", expected: "string"),
        Failure(kind: .licensePhase, json: #"{"licensePhase":5}"#, field: "licensePhase", expected: "string"),
        Failure(kind: .plan, json: #"{"isFreePlan":"false"}"#, field: "isFreePlan", expected: "boolean"),
        Failure(kind: .aiSettings, json: #"{"aiControlSetting":"on"}"#, field: "aiControlSetting", expected: nil),
        Failure(
            kind: .aiSettings, json: #"{"aiControlSetting":{"termsAgreement":"yes"}}"#,
            field: "aiControlSetting.termsAgreement", expected: "boolean"),
        Failure(kind: .roleChanged, json: #"{"eventType":7}"#, field: "eventType", expected: "string"),
        Failure(kind: .roleChanged, json: #"{"timestamp":false}"#, field: "timestamp", expected: "string"),
        Failure(kind: .tokenRevoked, json: #"{"revokedAt":"2025-01-01T00:00:00Z"}"#, field: "userId", expected: nil),
        Failure(kind: .tokenRevoked, json: #"{"userId":"u"}"#, field: "revokedAt", expected: nil),
        Failure(kind: .tokenRevoked, json: #"{"userId":"u","revokedAt":null}"#, field: "revokedAt", expected: nil),
        Failure(
            kind: .tokenRevoked, json: #"{"userId":42,"revokedAt":"2025-01-01T00:00:00Z"}"#, field: "userId",
            expected: "string"),
    ]

    @Test("wrong types and missing required fields fail with a message naming the field", arguments: failures)
    func failsNamingTheField(_ failure: Failure) {
        let result = Self.decoder.decode(failure.kind, from: Self.data(failure.json))
        guard case .failure(let error) = result else {
            Issue.record("decoded \(failure.json) as \(result)")
            return
        }
        #expect(error.field == failure.field)
        #expect(error.description.contains("'\(failure.field)'"), "\(error)")
        #expect(error.description.hasPrefix(failure.kind.payloadType.modelName), "\(error)")
        if let expected = failure.expected {
            #expect(error.description.contains("expected \(expected)"), "\(error)")
        }
        if failure.kind == .tokenRevoked && failure.expected == nil {
            #expect(error == .missingField(model: "UserTokenRevokeOutput", field: failure.field))
        }
    }

    @Test(
        "the new schema's eventType and timestamp are required: absent or null fails naming the field; legacy decoding does not require them",
        arguments: VortexEventKind.allCases)
    func requiredMetadata(_ kind: VortexEventKind) throws {
        let model = kind.payloadType.modelName
        for field in VortexEventDecoder.requiredMetadata {
            for missing in [nil, JSONValue.null] {
                var object = Self.required(kind)
                object[field] = missing
                let json = try Self.data(object)
                #expect(Self.decoder.decode(kind, from: json) == .failure(.missingField(model: model, field: field)), "\(field)")
                let (routed, result) = Self.decoder.decodeEvent(json, kind: kind, requiringMetadata: true)
                #expect(routed == kind && result == .failure(.missingField(model: model, field: field)), "\(field)")
                // Legacy GraphQL payloads need not carry them (docs/migration-guide.md).
                #expect(try Self.decoder.decodeEvent(json, kind: kind, requiringMetadata: false).result.get().kind == kind)
                #expect(try Self.decoder.decodeModel(kind, from: json).get().kind == kind)
            }
        }
        // The fast path and JSONDecoder agree: a payload the fast path declines (an escaped key) fails alike.
        var object = Self.required(kind)
        object["timestamp"] = nil
        object["ignored\u{e9}"] = true
        #expect(
            Self.decoder.decodeEvent(try Self.data(object), kind: kind, requiringMetadata: true).result
                == .failure(.missingField(model: model, field: "timestamp")))
        // On a wildcard channel an absent eventType cannot even be routed.
        object = Self.required(kind)
        object["eventType"] = nil
        let (routed, result) = Self.decoder.decodeEvent(try Self.data(object), kind: nil, requiringMetadata: true)
        #expect(routed == nil && result == .failure(.unknownEventType(nil)))
        #expect(VortexDecodingError.unknownEventType(nil).field == "eventType")
    }

    @Test("a wildcard payload is routed by its eventType as sent: a kind's own spelling, a tolerated one, or an escaped one")
    func routingByEventType() throws {
        for kind in VortexEventKind.allCases {
            let (routed, result) = Self.decoder.decodeEvent(try Self.data(Self.required(kind)), kind: nil, requiringMetadata: true)
            #expect(routed == kind)
            #expect(try result.get().kind == kind)
        }
        // The model keeps the spelling it was sent with, however it was routed.
        let sent: [(String, VortexEventKind)] = [
            ("roleChanged", .roleChanged), ("license/phaseChanged", .licensePhase), ("device/presenceChanged", .devicePresence),
        ]
        for (spelling, kind) in sent {
            var object = Self.required(kind)
            object["eventType"] = .string(spelling)
            let (routed, result) = Self.decoder.decodeEvent(try Self.data(object), kind: nil, requiringMetadata: true)
            #expect(routed == kind, "\(spelling)")
            #expect(try result.get().eventType == spelling, "\(spelling)")
        }
        let escaped = Self.data(#"{"eventType":"device\/presenceChanged","timestamp":"2026-01-01T00:00:00Z","online":true}"#)
        let (routed, result) = Self.decoder.decodeEvent(escaped, kind: nil, requiringMetadata: true)
        #expect(routed == .devicePresence)
        #expect(try result.get().eventType == "device/presenceChanged")
        let unknown = Self.data(#"{"eventType":"device/presenceChangedX","timestamp":"2026-01-01T00:00:00Z"}"#)
        #expect(
            Self.decoder.decodeEvent(unknown, kind: nil, requiringMetadata: true).result
                == .failure(.unknownEventType("device/presenceChangedX")))
    }

    @Test("malformed JSON and non-objects fail without a field")
    func malformedJSON() {
        for text in ["not json", "[1,2]", "\"text\"", "null", "{\"online\":"] {
            let result = Self.decoder.decode(.devicePresence, from: Self.data(text))
            guard case .failure(let error) = result else {
                Issue.record("decoded \(text)")
                continue
            }
            guard case .malformedJSON(let model, _) = error else {
                Issue.record("\(text): \(error)")
                continue
            }
            #expect(model == "DevicePresenceOutput")
            #expect(error.field == nil)
        }
        let legacy = Self.decoder.decodeLegacy(DeviceStateOutput.self, from: Self.data(#"{"online":"no"}"#))
        #expect(legacy == .failure(.typeMismatch(model: "DeviceStateOutput", field: "online", expected: "boolean")))
    }

    @Test("routing by eventType: absent or unknown eventType fails as unroutable")
    func routing() {
        #expect(
            Self.decoder.decode(routingByEventTypeIn: Self.data(#"{"online":true}"#))
                == .failure(.unknownEventType(nil)))
        #expect(
            Self.decoder.decode(routingByEventTypeIn: Self.data(#"{"eventType":"device/batteryChanged"}"#))
                == .failure(.unknownEventType("device/batteryChanged")))
        #expect(
            Self.decoder.decode(routingByEventTypeIn: Self.data(#"{"eventType":"user/roleChanged","timestamp":"t"}"#))
                == .success(.roleChanged(RoleChangeOutput(eventType: "user/roleChanged", timestamp: "t"))))
        #expect(
            Self.decoder.decode(routingByEventTypeIn: Self.data(#"{"eventType":"user/roleChanged"}"#))
                == .failure(.missingField(model: "RoleChangeOutput", field: "timestamp")))
        guard case .failure(let error) = Self.decoder.decode(routingByEventTypeIn: Self.data(#"{"eventType":1}"#))
        else {
            Issue.record("a numeric eventType was routed")
            return
        }
        #expect(error.field == "eventType")
        #expect(VortexDecodingError.unknownEventType("x").description.contains("'x'"))
    }

    // MARK: - Dates

    @Test(
        "ISO 8601 timestamps with and without fractional seconds",
        arguments: [
            ("2025-01-15T10:30:00Z", 1_736_937_000.0),
            ("2025-01-15T10:30:00.123Z", 1_736_937_000.123),
            ("2025-01-15T10:30:00.123456Z", 1_736_937_000.123456),
            ("2025-01-15T19:30:00+09:00", 1_736_937_000.0),
            ("2025-01-15T05:30:00.5-05:00", 1_736_937_000.5),
        ])
    func parsesTimestamps(_ text: String, _ seconds: Double) throws {
        let date = try #require(ISO8601Timestamp.date(from: text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_5)
        let payload = PlanStateOutput(timestamp: text)
        #expect(payload.date == date)
        #expect(VortexEvent.plan(payload).date == date)
    }

    @Test("the hand-written fast path agrees with Foundation's ISO 8601 parser (seeded random timestamps)")
    func fastTimestampsAgreeWithFoundation() throws {
        var rng = SplitMix64(seed: 0x1508)
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for _ in 0..<2_000 {
            let seconds = Int(rng.next() % 4_102_444_800)  // 1970...2100
            let utc = Date(timeIntervalSince1970: Double(seconds)).formatted(Date.ISO8601FormatStyle())
            let digits = Int(rng.next() % 4)
            let fraction = digits == 0 ? "" : "." + String((0..<digits).map { _ in Character("\(rng.next() % 10)") })
            let offsetMinutes = Int(rng.next() % 1_439) - 719
            var text = String(utc.dropLast()) + fraction
            if rng.next() % 2 == 0 {
                text += "Z"
            } else {
                let sign = offsetMinutes < 0 ? "-" : "+"
                text += sign + String(format: "%02d:%02d", abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
            }
            let fast = try #require(ISO8601Timestamp.fastDate(text), "\(text)")
            let reference = try style.parse(text.contains(".") ? text : text.replacingOccurrences(of: "Z", with: ".0Z"))
            #expect(abs(fast.timeIntervalSince(reference)) < 0.000_5, "\(text)")
        }
        for invalid in [
            "2025-02-29T10:00:00Z", "2025-13-01T10:00:00Z", "2025-01-15T24:00:00Z", "2025-01-15T10:30:00.Z", "2025-01-15T10:30:00+0900",
        ] {
            #expect(ISO8601Timestamp.fastDate(invalid) == nil, "\(invalid)")
        }
    }

    @Test(
        "unparsable or absent timestamps give nil",
        arguments: [
            "2025-01-15", "2025-01-15T10:30:00", "15/01/2025 10:30", "yesterday", "",
        ])
    func rejectsTimestamps(_ text: String) {
        #expect(ISO8601Timestamp.date(from: text) == nil)
        #expect(RoleChangeOutput(timestamp: text).date == nil)
    }

    @Test("dates of the fixtures, revokedAt and createdAt; formatting round-trips")
    func fixtureDates() throws {
        #expect(RoleChangeOutput().date == nil)
        let revoke = try Self.decoder.decodeLegacy(UserTokenRevokeOutput.self, from: Self.fixture("tokenRevoked")).get()
        #expect(revoke.revokedDate == ISO8601Timestamp.date(from: "2025-03-12T10:04:59.990Z"))
        #expect(try #require(revoke.date).timeIntervalSince(try #require(revoke.revokedDate)) > 0.25)
        let archive = try Self.decoder.decodeLegacy(ArchiveStateOutput.self, from: Self.fixture("archiveState")).get()
        #expect(archive.createdDate?.timeIntervalSince1970 == 1_741_596_900)

        let date = Date(timeIntervalSince1970: 1_736_937_000.25)
        #expect(ISO8601Timestamp.string(from: date) == "2025-01-15T10:30:00.250Z")
        #expect(ISO8601Timestamp.string(from: date, fractionalSeconds: false) == "2025-01-15T10:30:00Z")
        #expect(ISO8601Timestamp.date(from: ISO8601Timestamp.string(from: date)) == date)
    }

    // MARK: - Firmware range

    @Test("fwUpdateState outside -1...14 still decodes, flagged out of range")
    func firmwareRange() throws {
        let cases: [(Int?, Bool)] = [(-1, true), (0, true), (14, true), (-2, false), (15, false), (99, false), (nil, true)]
        for (state, inRange) in cases {
            #expect(DeviceFirmwareOutput(value: state).isFirmwareStateInRange == inRange, "\(String(describing: state))")
            #expect(DeviceStateOutput(fwUpdateState: state).isFirmwareStateInRange == inRange, "\(String(describing: state))")
        }
        let event = try Self.decoder.decode(
            .deviceFirmware, from: Self.data(#"{"eventType":"device/firmwareUpdated","timestamp":"t","fwUpdateState":99}"#)
        ).get()
        guard case .deviceFirmware(let output) = event else {
            Issue.record("not a firmware event")
            return
        }
        #expect(output.fwUpdateState == 99)
        #expect(!output.isFirmwareStateInRange)
    }

    // MARK: - Legacy merged outputs and conversions

    @Test("the legacy GraphQL device payload decodes as DeviceStateOutput")
    func legacyDeviceState() throws {
        let state = try Self.decoder.decodeLegacy(DeviceStateOutput.self, from: Self.fixture("legacy-subscribeDeviceState"))
            .get()
        #expect(
            state
                == DeviceStateOutput(
                    mac: Self.mac, derivant: "VX-D410", online: true, recording: true, fwUpdateState: 14,
                    thingName: Self.thing, deviceGroupID: "site-0a7f"))
        #expect(state.eventType == nil && state.timestamp == nil && state.date == nil)
        #expect(state.deviceGroup == "site-0a7f")
    }

    @Test("a device model reads every shared key and its own kind's field alone, on the fast path and through JSONDecoder")
    func deviceModelsReadTheirOwnField() throws {
        let shared = #""timestamp":"t","orgId":"o","siteId":"s","thingName":"th","derivant":"d","mac":"m","deviceGroupID":"g""#
        let fields = #""online":true,"recording":false,"fwUpdateState":7,"extra":1"#
        func payload(_ eventType: String) -> Data { Self.data(#"{"eventType":"\#(eventType)",\#(shared),\#(fields)}"#) }
        // The same payload with a non-ASCII unknown value: the fast path declines it, and JSONDecoder decodes it.
        func declined(_ eventType: String) -> Data { Self.data(#"{"eventType":"\#(eventType)",\#(shared),\#(fields),"x":"é"}"#) }
        func check<T: VortexEventPayload>(_ kind: VortexEventKind, _ expected: T) throws {
            for json in [payload(kind.eventType), declined(kind.eventType)] {
                #expect(try Self.decoder.decodeLegacy(T.self, from: json).get() == expected, "\(kind)")
                #expect(try JSONDecoder().decode(T.self, from: json) == expected, "\(kind)")
            }
        }
        let (t, o, s, th, d, m, g) = ("t", "o", "s", "th", "d", "m", "g")
        try check(
            .devicePresence,
            DevicePresenceOutput(
                eventType: VortexEventKind.devicePresence.eventType, timestamp: t, orgId: o, siteId: s, thingName: th, derivant: d,
                mac: m, deviceGroupID: g, value: true))
        try check(
            .deviceRecording,
            DeviceRecordingOutput(
                eventType: VortexEventKind.deviceRecording.eventType, timestamp: t, orgId: o, siteId: s, thingName: th,
                derivant: d, mac: m, deviceGroupID: g, value: false))
        try check(
            .deviceFirmware,
            DeviceFirmwareOutput(
                eventType: VortexEventKind.deviceFirmware.eventType, timestamp: t, orgId: o, siteId: s, thingName: th, derivant: d,
                mac: m, deviceGroupID: g, value: 7))
        // The merged model reads all three.
        try check(
            .devicePresence,
            DeviceStateOutput(
                mac: m, derivant: d, online: true, recording: false, fwUpdateState: 7, thingName: th, deviceGroupID: g, orgId: o,
                siteId: s, eventType: VortexEventKind.devicePresence.eventType, timestamp: t))
        // A kind field of the wrong type fails either way, naming the field.
        let wrong = Self.data(#"{"recording":"yes"}"#)
        #expect(
            Self.decoder.decodeLegacy(DeviceRecordingOutput.self, from: wrong)
                == .failure(.typeMismatch(model: "DeviceRecordingOutput", field: "recording", expected: "boolean")))
    }

    @Test("deviceGroup prefers siteId, falls back to deviceGroupID")
    func deviceGroup() {
        #expect(DevicePresenceOutput(siteId: "s", deviceGroupID: "g").deviceGroup == "s")
        #expect(DeviceRecordingOutput(deviceGroupID: "g").deviceGroup == "g")
        #expect(ArchiveStateOutput(siteId: "s").deviceGroup == "s")
        #expect(DeviceStateOutput(deviceGroupID: "g").deviceGroup == "g")
        #expect(DeviceFirmwareOutput().deviceGroup == nil)
    }

    @Test("merged → split: a multi-field legacy device event without eventType becomes several events, in order")
    func splitDeviceByFieldPresence() throws {
        let state = try Self.decoder.decodeLegacy(DeviceStateOutput.self, from: Self.fixture("legacy-subscribeDeviceState"))
            .get()
        let common = (thingName: Self.thing, derivant: "VX-D410", mac: Self.mac, group: "site-0a7f")
        #expect(
            state.split() == [
                .devicePresence(
                    DevicePresenceOutput(
                        eventType: "device/presenceChanged", thingName: common.thingName, derivant: common.derivant,
                        mac: common.mac, deviceGroupID: common.group, value: true)),
                .deviceRecording(
                    DeviceRecordingOutput(
                        eventType: "device/recordingStateChanged", thingName: common.thingName, derivant: common.derivant,
                        mac: common.mac, deviceGroupID: common.group, value: true)),
                .deviceFirmware(
                    DeviceFirmwareOutput(
                        eventType: "device/firmwareUpdated", thingName: common.thingName, derivant: common.derivant,
                        mac: common.mac, deviceGroupID: common.group, value: 14)),
            ])
        #expect(
            DeviceStateOutput(mac: "m", recording: false).split()
                == [.deviceRecording(DeviceRecordingOutput(eventType: "device/recordingStateChanged", mac: "m", value: false))])
        #expect(
            DeviceStateOutput(mac: "m", online: false, fwUpdateState: 2).split().map(\.kind)
                == [.devicePresence, .deviceFirmware])
        #expect(DeviceStateOutput(mac: "m", thingName: "t").split() == [])
    }

    @Test("merged → split: eventType decides when present; an unknown one falls back to the fields")
    func splitDeviceByEventType() {
        let state = DeviceStateOutput(
            mac: "m", online: true, recording: false, fwUpdateState: 3, orgId: "o", siteId: "s",
            eventType: "device/recordingStateChanged", timestamp: "2025-01-01T00:00:00Z")
        #expect(
            state.split() == [
                .deviceRecording(
                    DeviceRecordingOutput(
                        eventType: "device/recordingStateChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o", siteId: "s",
                        mac: "m", value: false))
            ])

        let presenceWithoutField = DeviceStateOutput(mac: "m", eventType: "device/presenceChanged")
        #expect(presenceWithoutField.split() == [.devicePresence(DevicePresenceOutput(eventType: "device/presenceChanged", mac: "m"))])

        let unknown = DeviceStateOutput(online: true, eventType: "device/batteryChanged")
        #expect(unknown.split() == [.devicePresence(DevicePresenceOutput(eventType: "device/batteryChanged", value: true))])

        let foreign = DeviceStateOutput(fwUpdateState: 1, eventType: "organization/planChanged")
        #expect(foreign.split().map(\.kind) == [.deviceFirmware])
    }

    @Test("merged → split: organization events by field presence and by eventType")
    func splitOrganization() throws {
        let state = try Self.decoder.decodeLegacy(
            OrganizationStateOutput.self, from: Self.fixture("legacy-subscribeOrganizationState")
        ).get()
        let setting = AIControlSetting(uuid: "0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a", termsAgreement: false)
        #expect(
            state.split() == [
                .licensePhase(
                    LicenseStateOutput(
                        eventType: "organization/licensePhaseChanged", orgId: "org-42c9e1", licensePhase: .valid)),
                .plan(PlanStateOutput(eventType: "organization/planChanged", orgId: "org-42c9e1", isFreePlan: false)),
                .aiSettings(
                    AISettingsOutput(
                        eventType: "organization/aiSettingsChanged", orgId: "org-42c9e1", aiControlSetting: setting)),
            ])

        let routed = OrganizationStateOutput(
            orgId: "o", licensePhase: .valid, isFreePlan: true, eventType: "organization/planChanged",
            timestamp: "2025-01-01T00:00:00Z")
        #expect(
            routed.split() == [
                .plan(
                    PlanStateOutput(
                        eventType: "organization/planChanged", timestamp: "2025-01-01T00:00:00Z", orgId: "o", isFreePlan: true))
            ])
        #expect(OrganizationStateOutput(AIControlSetting: setting).split().map(\.kind) == [.aiSettings])
        #expect(OrganizationStateOutput(orgId: "o").split() == [])
        #expect(
            OrganizationStateOutput(licensePhase: .invalid, eventType: "license/phaseChanged").split()
                == [.licensePhase(LicenseStateOutput(eventType: "license/phaseChanged", licensePhase: .invalid))])
    }

    @Test("split → merged carries eventType, timestamp and the common fields")
    func mergeDevice() throws {
        guard case .devicePresence(let presence)? = Self.expected[.devicePresence] else {
            Issue.record("no presence fixture")
            return
        }
        let merged = DeviceStateOutput(presence)
        #expect(
            merged
                == DeviceStateOutput(
                    mac: Self.mac, derivant: "VX-D410", online: false, thingName: Self.thing, orgId: "org-42c9e1",
                    siteId: "site-0a7f", eventType: "device/presenceChanged", timestamp: "2025-03-10T08:15:42.318Z"))
        #expect(merged.recording == nil && merged.fwUpdateState == nil && merged.deviceGroupID == nil)
        #expect(merged.deviceGroup == "site-0a7f")

        #expect(
            DeviceStateOutput(DeviceRecordingOutput(deviceGroupID: "g", value: true))
                == DeviceStateOutput(recording: true, deviceGroupID: "g"))
        #expect(
            DeviceStateOutput(DeviceFirmwareOutput(timestamp: "t", value: 5))
                == DeviceStateOutput(fwUpdateState: 5, timestamp: "t"))

        guard case .aiSettings(let ai)? = Self.expected[.aiSettings] else {
            Issue.record("no AI fixture")
            return
        }
        let organization = OrganizationStateOutput(ai)
        #expect(organization.AIControlSetting == ai.aiControlSetting)
        #expect(organization.aiControlSetting == ai.aiControlSetting)
        #expect(organization.eventType == ai.eventType && organization.timestamp == ai.timestamp)
        #expect(organization.orgId == "org-42c9e1" && organization.licensePhase == nil && organization.isFreePlan == nil)
        #expect(
            OrganizationStateOutput(LicenseStateOutput(orgId: "o", licensePhase: .gracePeriod))
                == OrganizationStateOutput(orgId: "o", licensePhase: .gracePeriod))
        #expect(
            OrganizationStateOutput(PlanStateOutput(eventType: "e", isFreePlan: true))
                == OrganizationStateOutput(isFreePlan: true, eventType: "e"))
    }

    @Test("split → merged → split gives the event back", arguments: VortexEventKind.allCases)
    func roundTrip(_ kind: VortexEventKind) throws {
        let event = try #require(Self.expected[kind])
        switch kind {
        case .devicePresence, .deviceRecording, .deviceFirmware:
            let merged = try #require(DeviceStateOutput(event))
            #expect(merged.split() == [event])
            #expect(OrganizationStateOutput(event) == nil)
        case .licensePhase, .plan, .aiSettings:
            let merged = try #require(OrganizationStateOutput(event))
            #expect(merged.split() == [event])
            #expect(DeviceStateOutput(event) == nil)
        case .archiveState, .roleChanged, .tokenRevoked:
            // Shared by both APIs: no conversion.
            #expect(DeviceStateOutput(event) == nil)
            #expect(OrganizationStateOutput(event) == nil)
        }
        #expect(VortexEvent(event.payload) == event)
    }

    @Test("OrganizationStateOutput accepts AIControlSetting and aiControlSetting, and writes AIControlSetting")
    func organizationAcceptsBothKeys() throws {
        func decode(_ text: String) throws -> OrganizationStateOutput {
            try Self.decoder.decodeLegacy(OrganizationStateOutput.self, from: Self.data(text)).get()
        }
        let pascal = try decode(#"{"AIControlSetting":{"uuid":"a","termsAgreement":true}}"#)
        let camel = try decode(#"{"aiControlSetting":{"uuid":"a","termsAgreement":true}}"#)
        #expect(pascal.AIControlSetting == AIControlSetting(uuid: "a", termsAgreement: true))
        #expect(camel == pascal)
        #expect(try decode(#"{"AIControlSetting":{"uuid":"p"},"aiControlSetting":{"uuid":"c"}}"#).AIControlSetting?.uuid == "p")
        #expect(try decode(#"{"AIControlSetting":null,"aiControlSetting":{"uuid":"c"}}"#).AIControlSetting?.uuid == "c")
        #expect(try decode(#"{"orgId":"o"}"#).AIControlSetting == nil)
        let wrong = Self.decoder.decodeLegacy(OrganizationStateOutput.self, from: Self.data(#"{"aiControlSetting":{"uuid":1}}"#))
        #expect(
            wrong
                == .failure(
                    .typeMismatch(
                        model: "OrganizationStateOutput", field: "aiControlSetting.uuid", expected: "string")))

        let encoded = try Self.object(JSONEncoder().encode(camel))
        #expect(encoded == ["AIControlSetting": ["uuid": "a", "termsAgreement": true]])
        #expect(try decode(String(decoding: JSONEncoder().encode(camel), as: UTF8.self)) == camel)

        var mutable = OrganizationStateOutput()
        mutable.aiControlSetting = AIControlSetting(uuid: "z")
        #expect(mutable.AIControlSetting?.uuid == "z")
    }

    // MARK: - Kinds

    @Test("the kind table: eventType, channel and legacy subscription")
    func kindTable() {
        let table: [(VortexEventKind, String, String, String)] = [
            (.devicePresence, "device/presenceChanged", "device/presenceChanged", "subscribeDeviceState"),
            (.deviceRecording, "device/recordingStateChanged", "device/recordingStateChanged", "subscribeDeviceState"),
            (.deviceFirmware, "device/firmwareUpdated", "device/firmwareUpdated", "subscribeDeviceState"),
            (.archiveState, "archive/stateChanged", "archive/stateChanged", "subscribeArchiveState"),
            (.licensePhase, "organization/licensePhaseChanged", "organization/licensePhaseChanged", "subscribeOrganizationState"),
            (.plan, "organization/planChanged", "organization/planChanged", "subscribeOrganizationState"),
            (.aiSettings, "organization/aiSettingsChanged", "organization/aiSettingsChanged", "subscribeOrganizationState"),
            (.roleChanged, "user/roleChanged", "roleChanged", "subscribeRoleChange"),
            (.tokenRevoked, "user/tokenRevoked", "tokenRevoked", "subscribeUserTokenRevoke"),
        ]
        #expect(table.map(\.0) == VortexEventKind.allCases)
        for (kind, eventType, suffix, legacy) in table {
            #expect(kind.eventType == eventType)
            #expect(kind.channelSuffix == suffix)
            #expect(kind.legacySubscription == legacy)
            #expect(VortexEventKind(eventType: eventType) == kind)
            #expect(kind.channel(userId: "u-9") == "vortex-app/user/u-9/\(suffix)")
        }
        #expect(VortexEventKind(eventType: "roleChanged") == .roleChanged)
        #expect(VortexEventKind(eventType: "tokenRevoked") == .tokenRevoked)
        #expect(VortexEventKind(eventType: "license/phaseChanged") == .licensePhase)
        #expect(VortexEventKind(eventType: "device/*") == nil)
        #expect(VortexEventKind(eventType: "Device/PresenceChanged") == nil)
        #expect(VortexEventKind(eventType: "") == nil)
    }

    // MARK: - A device field declared outside the package

    /// What an app may declare: a field on one of the three keys (``DeviceEventFieldKey`` has no other), under its own
    /// model name.
    enum RecordingFlag: DeviceEventField {
        typealias Value = Bool
        static var key: DeviceEventFieldKey { .recording }
        static var modelName: String { "RecordingFlag" }
    }

    @Test("a device field declared outside the package names one of the three keys, and its model reads and writes it")
    func deviceFieldDeclaredOutside() throws {
        let keys = [DevicePresenceField.key, DeviceRecordingField.key, DeviceFirmwareField.key]
        #expect(keys.map(\.name) == ["online", "recording", "fwUpdateState"])
        #expect(keys.map(\.description) == keys.map(\.name))
        #expect(DeviceEventOutput<RecordingFlag>.knownFields.contains("recording"))
        #expect(!DeviceEventOutput<RecordingFlag>.knownFields.contains("online"))
        #expect(DeviceEventOutput<RecordingFlag>.modelName == "RecordingFlag")

        let json = Self.data(#"{"thingName":"vx-1","recording":true,"online":false}"#)
        for model in [
            try JSONDecoder().decode(DeviceEventOutput<RecordingFlag>.self, from: json),
            try #require(FlatJSONDecoder.decode(DeviceEventOutput<RecordingFlag>.self, from: json)),
        ] {
            #expect(model.thingName == "vx-1" && model.value == true)
            #expect(try Self.object(JSONEncoder().encode(model)) == ["thingName": "vx-1", "recording": true])
        }
    }

    // MARK: - JSONValue

    @Test("JSONValue decodes any JSON and encodes integral numbers without a fraction")
    func jsonValue() throws {
        let text = #"{"a":[1,2.5,"x",true,null,{"b":{}}],"n":-3,"big":1e3}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Self.data(text))
        #expect(value == ["a": [1, 2.5, "x", true, nil, ["b": [:]]], "n": -3, "big": 1000])
        #expect(value["n"]?.numberValue == -3)
        #expect(value["a"]?.stringValue == nil && value["missing"] == nil)
        #expect(JSONValue.string("s").stringValue == "s" && JSONValue.bool(false).boolValue == false)
        #expect(String(decoding: try JSONEncoder().encode(JSONValue.number(30)), as: UTF8.self) == "30")
        #expect(String(decoding: try JSONEncoder().encode(JSONValue.number(0.75)), as: UTF8.self) == "0.75")
        let again = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        #expect(again == value)
    }
}
