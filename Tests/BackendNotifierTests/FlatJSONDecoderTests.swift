import Foundation
import RealtimeTesting
import SubscriberCore
import Testing

@testable import BackendNotifier

/// The fast decoding path must never disagree with `JSONDecoder`: whenever it answers, `JSONDecoder` decodes the same
/// JSON to an equal value. Checked on every device fixture and on seeded mutations of them (values of other types, escapes,
/// non-ASCII text, odd numbers, nested objects, arrays, duplicate and unknown keys).
@Suite("Flat JSON decoding fast path")
struct FlatJSONDecoderTests {
    @Test("agrees with JSONDecoder on every device fixture and seeded mutations of them, and leaves the other models to it")
    func agreesWithJSONDecoder() throws {
        var rng = SplitMix64(seed: 0x5EED_F1A7)
        var fast = 0
        var total = 0
        func check<T: Decodable & Equatable>(_ type: T.Type, _ fixture: String, mutations: Int) throws {
            let json = try ModelDecodingTests.fixture(fixture)
            let original = try #require(FlatJSONDecoder.decode(type, from: json), "the fast path must apply to \(fixture)")
            #expect(original == (try JSONDecoder().decode(type, from: json)))
            let members = try Self.members(of: json)
            for _ in 0..<mutations {
                let mutated = Self.mutate(members, &rng)
                let text = Data(mutated.utf8)
                total += 1
                guard let value = FlatJSONDecoder.decode(type, from: text) else { continue }
                fast += 1
                let reference = try? JSONDecoder().decode(type, from: text)
                #expect(reference == value, "\(fixture): \(mutated)")
            }
        }
        try check(DevicePresenceOutput.self, "devicePresence", mutations: 400)
        try check(DeviceStateOutput.self, "devicePresence", mutations: 200)
        try check(DeviceRecordingOutput.self, "deviceRecording", mutations: 300)
        try check(DeviceFirmwareOutput.self, "deviceFirmware", mutations: 300)
        // The other models' events are rare: the fast path leaves them to JSONDecoder, valid as they are.
        func leftToJSONDecoder<T: Decodable>(_ type: T.Type, _ fixture: String) throws {
            let json = try ModelDecodingTests.fixture(fixture)
            _ = try JSONDecoder().decode(type, from: json)
            #expect(FlatJSONDecoder.decode(type, from: json) == nil, "\(type) from \(fixture)")
        }
        try leftToJSONDecoder(ArchiveStateOutput.self, "archiveState")
        try leftToJSONDecoder(LicenseStateOutput.self, "licensePhase")
        try leftToJSONDecoder(PlanStateOutput.self, "plan")
        try leftToJSONDecoder(OrganizationStateOutput.self, "licensePhase")
        try leftToJSONDecoder(RoleChangeOutput.self, "roleChanged")
        try leftToJSONDecoder(UserTokenRevokeOutput.self, "tokenRevoked")
        try leftToJSONDecoder(AISettingsOutput.self, "aiSettings")
        // Not vacuous: many mutations keep the fast path (the rest, mostly invalid on purpose, are JSONDecoder's to judge).
        #expect(fast * 5 > total, "the fast path applied to \(fast) of \(total) mutations")
    }

    @Test("declines bytes that are not UTF-8 and escaped keys, which it would read otherwise than JSONDecoder")
    func declinesWhatJSONDecoderReadsOtherwise() throws {
        // JSONDecoder rejects a byte that is not UTF-8; a string made from it would hold U+FFFD instead.
        var invalid = Array(#"{"eventType":"device/presenceChanged","thingName":"dev-1","online":true}"#.utf8)
        invalid[try #require(invalid.firstIndex(of: UInt8(ascii: "1")))] = 0xE9
        #expect(FlatJSONDecoder.decode(DevicePresenceOutput.self, from: Data(invalid)) == nil)
        #expect((try? JSONDecoder().decode(DevicePresenceOutput.self, from: Data(invalid))) == nil)
        // An escaped key is the key it spells: `\u006dac` is `mac`.
        let escaped = Data(#"{"\u006dac":"00:1A","online":true}"#.utf8)
        #expect(FlatJSONDecoder.decode(DevicePresenceOutput.self, from: escaped) == nil)
        #expect(try JSONDecoder().decode(DevicePresenceOutput.self, from: escaped).mac == "00:1A")
    }

    @Test("the member-by-member models read every coding key, as JSONDecoder does")
    func memberByMemberModelsReadEveryKey() throws {
        func check<T: DevicePayloadFields & VortexEventPayload>(_ type: T.Type) throws {
            let empty = try JSONDecoder().decode(type, from: Data("{}".utf8))
            for key in T.knownFields.sorted() {
                var read = false
                for value in [#""v""#, "true", "3", "null"] {
                    let json = Data(#"{"\#(key)":\#(value)}"#.utf8)
                    guard let reference = try? JSONDecoder().decode(type, from: json) else {
                        #expect(FlatJSONDecoder.decode(type, from: json) == nil, "\(T.modelName).\(key) = \(value)")
                        continue
                    }
                    #expect(FlatJSONDecoder.decode(type, from: json) == reference, "\(T.modelName).\(key) = \(value)")
                    if reference != empty { read = true }
                }
                #expect(read, "no value of \(T.modelName).\(key) decodes to a change")
            }
        }
        try check(DevicePresenceOutput.self)
        try check(DeviceRecordingOutput.self)
        try check(DeviceFirmwareOutput.self)
        try check(DeviceStateOutput.self)
    }

    @Test("the merged device path gives what the event's model gives, merged, or leaves the payload to it")
    func mergedDevicePathAgreesWithTheModels() throws {
        var rng = SplitMix64(seed: 0x3E_86ED)
        let decoder = VortexEventDecoder()
        var fast = 0
        var total = 0
        for fixture in ["devicePresence", "deviceRecording", "deviceFirmware", "archiveState", "licensePhase"] {
            // The other kinds' fields, any value: the event's own model ignores them.
            let members =
                try Self.members(of: try ModelDecodingTests.fixture(fixture))
                + [("online", "true"), ("recording", "\"no\""), ("fwUpdateState", "3")].shuffled(using: &rng).prefix(2)
            for round in 0..<300 {
                let text =
                    round == 0 ? "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}" : Self.mutate(members, &rng)
                let json = Data(text.utf8)
                for required in [true, false] {
                    total += 1
                    let (kind, result) = decoder.decodeEvent(json, kind: nil, requiringMetadata: required)
                    let reference = (try? result.get()).flatMap(DeviceStateOutput.init)
                    guard let merged = decoder.mergedDeviceEvent(json, requiringMetadata: required) else { continue }
                    fast += 1
                    #expect(merged.kind == kind && merged.value == reference, "\(fixture): \(text)")
                }
            }
        }
        // Not vacuous: the unmutated device payloads and many mutations take the merged path (193 of 3,000 with this
        // seed; archives, licences and most mutations are the general path's).
        #expect(fast * 20 > total, "the merged path applied to \(fast) of \(total) payloads")
    }

    /// The fixture's top-level members as key and raw value text.
    private static func members(of json: Data) throws -> [(String, String)] {
        try json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return try JSONEnvelope(scanning: bytes).members.map {
                (String(decoding: bytes[$0.key], as: UTF8.self), String(decoding: bytes[$0.rawValue], as: UTF8.self))
            }
        }
    }

    private static let values = [
        #""plain""#, #""esc\"aped\\""#, #""\u00e9t\u00e9""#, #""été""#, #""\ud83d\ude00""#, #""\ud800""#, #""""#,
        "42", "-7", "0", "-0", "2.5", "1e3", "1E-2", "1e400", "01", "1.", "123456789012345678901234", "true", "false", "null",
        #"{"a":1}"#, #"{"termsAgreement":true,"uuid":"u"}"#, "[1,2]", "[]", "{}",
    ]

    /// One to three edits: a value replaced, a key added or repeated, a key dropped.
    private static func mutate(_ members: [(String, String)], _ rng: inout SplitMix64) -> String {
        var members = members
        for _ in 0...(rng.next() % 3) {
            let value = values[Int(rng.next() % UInt64(values.count))]
            switch rng.next() % 5 {
            case 0, 1:
                let index = Int(rng.next() % UInt64(members.count))
                members[index].1 = value
            case 2:
                members.append(("unknownField", value))
            case 3:
                let index = Int(rng.next() % UInt64(members.count))
                members.append((members[index].0, value))
            default:
                if members.count > 1 { members.remove(at: Int(rng.next() % UInt64(members.count))) }
            }
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}
