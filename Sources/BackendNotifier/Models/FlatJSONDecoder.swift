import Foundation
import SubscriberCore

/// A fast path in front of `JSONDecoder` for the device models (``DevicePayloadFields``), the events that come by the
/// thousand: an ASCII JSON object of strings, numbers, literals and nested objects, read member by member by the
/// models' own decoding code.
///
/// It reads the payload with the transports' single-pass ``JSONEnvelope`` scanner instead of building
/// `JSONDecoder`'s value tree, and it only ever answers when it is sure to agree with `JSONDecoder`: anything it does
/// not handle exactly alike (non-ASCII bytes, arrays, duplicate or escaped keys, a number that is not plain JSON, a
/// type mismatch) makes it return `nil`, and the caller decodes with `JSONDecoder`, which then also produces the error.
/// So values are the same either way; only the cost differs. The other models, whose events are rare, always take
/// `JSONDecoder`.
enum FlatJSONDecoder {
    /// `json` decoded as `type` when `type` is a device model and the fast path applies; `nil` otherwise (decode with
    /// `JSONDecoder` then).
    static func decode<T: Decodable>(_ type: T.Type, from json: Data) -> T? {
        guard let device = type as? any DevicePayloadFields.Type else { return nil }
        return json.withUnsafeBytes { raw -> T? in
            guard let object = object(raw.bindMemory(to: UInt8.self)) else { return nil }
            return (try? device.init(flat: object)) as? T
        }
    }

    /// The JSON object in `bytes` if the fast path applies to it (ASCII, no duplicate or escaped keys, valid values).
    static func object(_ bytes: UnsafeBufferPointer<UInt8>) -> ObjectView? {
        try? ObjectView(bytes)
    }

    /// The fast path does not apply; `JSONDecoder` decides.
    struct Unsupported: Error {}

    /// One validated JSON object: its members, keys unescaped-free and unique, values checked as JSON, each with the
    /// device key it spells, found once for the duplicate check and the model's reading alike.
    struct ObjectView {
        let bytes: UnsafeBufferPointer<UInt8>
        /// The members in document order; `key` is `nil` for a key that is no device key.
        let members: [(member: JSONEnvelope.Member, key: DeviceKey?)]

        /// The scan also tells whether the bytes are all ASCII: no pass of their own.
        init(_ bytes: UnsafeBufferPointer<UInt8>) throws {
            self.bytes = bytes
            var members: [(member: JSONEnvelope.Member, key: DeviceKey?)] = []
            members.reserveCapacity(12)
            var escapedKey = false
            let isASCII = try JSONEnvelope.scan(bytes) { _, member in
                escapedKey = escapedKey || member.keyHasEscapes
                members.append((member, DeviceKey(bytes: UnsafeBufferPointer(rebasing: bytes[member.key]))))
            }
            guard isASCII, !escapedKey else { throw Unsupported() }
            for (index, (member, _)) in members.enumerated() {
                for (earlier, _) in members[..<index] where Self.sameKey(earlier.key, member.key, bytes) { throw Unsupported() }
                try Self.validate(member, in: bytes)
            }
            self.members = members
        }

        /// Every pair of keys is compared by their bytes (the device keys' enum has no cheap `==` across modules): the
        /// length and first byte rule out nearly all before `memcmp`.
        private static func sameKey(_ one: Range<Int>, _ other: Range<Int>, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            one.count == other.count && (one.isEmpty || bytes[one.lowerBound] == bytes[other.lowerBound])
                && JSONEnvelope.bytes(one, in: bytes, equal: UnsafeBufferPointer(rebasing: bytes[other]))
        }

        /// What `JSONDecoder` would reject about a value the scanner only skipped over.
        private static func validate(_ member: JSONEnvelope.Member, in bytes: UnsafeBufferPointer<UInt8>) throws {
            switch member.kind {
            case .string:
                if member.valueHasEscapes { _ = try JSONEnvelope.unescape(bytes, member.value) }
            case .number:
                guard isPlainJSONNumber(bytes[member.value]) else { throw Unsupported() }
            case .object:
                _ = try ObjectView(UnsafeBufferPointer(rebasing: bytes[member.value]))
            case .array:
                throw Unsupported()
            case .literal:
                break
            }
        }

        /// A member's value for the scalar accessors (``Value/optional(_:)`` and the like), which reject any other kind of
        /// value; nested objects are not scanned again.
        func scalar(_ member: JSONEnvelope.Member) -> Value { Value(member: member, bytes: bytes) }

        /// The value of `eventType`, if the object has one.
        var eventType: Value? {
            members.first { if case .eventType? = $0.key { true } else { false } }.map { scalar($0.member) }
        }
    }

    /// A member's value as the device models read it: a string, number or literal (anything else is refused).
    struct Value: DeviceMemberValue {
        let member: JSONEnvelope.Member
        let bytes: UnsafeBufferPointer<UInt8>

        var isNull: Bool { member.kind == .literal && bytes[member.value].first == UInt8(ascii: "n") }

        func string() throws -> String {
            guard member.kind == .string else { throw Unsupported() }
            if member.valueHasEscapes { return String(decoding: try JSONEnvelope.unescape(bytes, member.value), as: UTF8.self) }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[member.value]), as: UTF8.self)
        }

        func bool() throws -> Bool {
            guard member.kind == .literal, let first = bytes[member.value].first, first != UInt8(ascii: "n") else { throw Unsupported() }
            return first == UInt8(ascii: "t")
        }

        /// The string's bytes when it needs no unescaping; `nil` for anything else.
        var plainStringBytes: UnsafeBufferPointer<UInt8>? {
            guard member.kind == .string, !member.valueHasEscapes else { return nil }
            return UnsafeBufferPointer(rebasing: bytes[member.value])
        }

        /// ``optional(_:)`` of a `String` for `eventType`: a kind's own spelling is that kind's constant, so the field
        /// costs no allocation (it is longer than a string stored inline).
        func optionalEventType() throws -> String? {
            if let kind = plainStringBytes.flatMap(VortexEventKind.init(eventTypeBytes:)) { return kind.eventType }
            return try optional(String.self)
        }

        /// For the device models (``DevicePayloadFields``): what `decodeIfPresent` gives (`nil` for `null`). The device
        /// fields' types (`String`, `Bool`, `Int`) are read directly, the checks folding away once specialized; any
        /// other type is `JSONDecoder`'s.
        func optional<T: Decodable>(_ type: T.Type) throws -> T? {
            if isNull { return nil }
            if T.self == String.self { return try string() as? T }
            if T.self == Bool.self { return try bool() as? T }
            if T.self == Int.self { return try int() as? T }
            throw Unsupported()
        }

        /// Plain decimal digits, read without building a string; anything else (a fraction, an exponent, an overflow) is
        /// left to JSONDecoder's own rules.
        func int() throws -> Int {
            guard member.kind == .number else { throw Unsupported() }
            let digits = bytes[member.value]
            var index = digits.startIndex
            let negative = digits[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < digits.endIndex, digits.endIndex - index <= 18 else { throw Unsupported() }
            var value = 0
            while index < digits.endIndex {
                let digit = digits[index] &- UInt8(ascii: "0")
                guard digit < 10 else { throw Unsupported() }
                value = value * 10 + Int(digit)
                index += 1
            }
            return negative ? -value : value
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: what JSON allows, which the scanner does not check.
    static func isPlainJSONNumber(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var index = text.startIndex
        let end = text.endIndex
        func isDigit(_ at: Int) -> Bool { at < end && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[at]) }
        if index < end && text[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return false }
        if text[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < end && text[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        if index < end && (text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E")) {
            index += 1
            if index < end && (text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-")) { index += 1 }
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        return index == end
    }
}
