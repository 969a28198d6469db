import Foundation
import Testing

@testable import VortexVocabulary

@Suite("The shared vocabulary")
struct VortexVocabularyTests {
    @Test("every device key is recognised from its bytes; other keys, prefixes, extensions and same-length near misses are not")
    func deviceKeyFromBytes() {
        func key(_ text: String) -> DeviceKey? {
            Array(text.utf8).withUnsafeBufferPointer { DeviceKey(bytes: $0) }
        }
        for deviceKey in DeviceKey.allCases {
            #expect(key(deviceKey.rawValue) == deviceKey)
            #expect("\(deviceKey.spelling)" == deviceKey.rawValue)
        }
        for other in [
            "", "mac ", "ma", "Mac", "thingname", "deviceGroupId", "onlineX", "userId", "fwUpdateStat", "timestamX", "thingNamX",
            "tXmestamp", "orgIX", "eventTypX",
        ] {
            #expect(key(other) == nil, "\(other)")
        }
    }

    @Test("the shared keys are the first eight, in the encoding order; each device kind names its field")
    func sharedKeysAndFields() {
        #expect(DeviceKey.shared == Array(DeviceKey.allCases.prefix(8)))
        #expect(
            DeviceKey.shared.map(\.rawValue) == [
                "eventType", "timestamp", "orgId", "siteId", "thingName", "derivant", "mac", "deviceGroupID",
            ])
        #expect(VortexEventKind.allCases.compactMap(\.deviceField) == [.online, .recording, .fwUpdateState])
    }

    @Test("each kind is found by its eventType and its channel suffix, encodes as its case name, and builds its channel")
    func kinds() throws {
        for kind in VortexEventKind.allCases {
            #expect(VortexEventKind(eventType: kind.eventType) == kind)
            #expect(VortexEventKind(eventType: kind.channelSuffix) == kind)
            #expect(kind.channel(userId: "u-1") == "vortex-app/user/u-1/" + kind.channelSuffix)
            let encoded = try JSONEncoder().encode([kind])
            #expect(String(decoding: encoded, as: UTF8.self) == "[\"\(kind.rawValue)\"]")
        }
        #expect(Set(VortexEventKind.allCases.map(\.eventType)).count == 9)
        #expect(VortexEventKind(eventType: "license/phaseChanged") == .licensePhase)
        #expect(VortexEventKind(eventType: "device/unknown") == nil)
    }

    @Test("a kind is found from its eventType's bytes, exactly: the tolerated spellings and near misses are not")
    func kindFromEventTypeBytes() {
        func kind(_ text: String) -> VortexEventKind? {
            Array(text.utf8).withUnsafeBufferPointer { VortexEventKind(eventTypeBytes: $0) }
        }
        for eventKind in VortexEventKind.allCases { #expect(kind(eventKind.eventType) == eventKind) }
        for other in [
            "", "roleChanged", "license/phaseChanged", "device/presenceChange", "device/presenceChangeD", "Device/presenceChanged",
        ] {
            #expect(kind(other) == nil, "\(other)")
        }
    }

    @Test("bytes spell a string only when every byte and the length match")
    func spelling() {
        func spells(_ text: String, _ spelling: String) -> Bool {
            Array(text.utf8).withUnsafeBufferPointer { $0.spells(spelling) }
        }
        #expect(spells("", ""))
        #expect(spells("mac", "mac"))
        #expect(spells("device/presenceChanged", "device/presenceChanged"))
        #expect(!spells("", "mac"))
        #expect(!spells("mac", ""))
        #expect(!spells("mac", "max"))
        #expect(!spells("device/presenceChanged", "device/presenceChangeD"))
        #expect(!spells("macs", "mac"))
    }

    @Test(
        "bytes spell a static string only when every byte and the length match, whatever the length",
        arguments: [
            ("", "" as StaticString, true), ("m", "m", true), ("m", "n", false), ("mac", "mac", true), ("mbc", "mac", false),
            ("maC", "mac", false), ("orgId", "orgId", true), ("OrgId", "orgId", false), ("orgIx", "orgId", false),
            ("orgXd", "orgId", false), ("derivant", "derivant", true), ("derivanT", "derivant", false),
            ("Derivant", "derivant", false), ("deviceGroupID", "deviceGroupID", true), ("deviceGroupId", "deviceGroupID", false),
            ("devicEGroupID", "deviceGroupID", false), ("0123456789abcdef", "0123456789abcdef", true),
            ("0123456789abcdeF", "0123456789abcdef", false), ("device/presenceChanged", "device/presenceChanged", true),
            ("device/presEnceChanged", "device/presenceChanged", false), ("mac", "macs", false), ("macs", "mac", false),
        ] as [(String, StaticString, Bool)])
    func staticSpelling(text: String, spelling: StaticString, spells: Bool) {
        #expect(Array(text.utf8).withUnsafeBufferPointer { $0.spells(spelling) } == spells)
    }
}
