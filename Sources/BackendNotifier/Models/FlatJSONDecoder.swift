import Foundation
import SubscriberCore

/// A fast path in front of `JSONDecoder` for the shape events have: an ASCII JSON object of strings, numbers,
/// literals and nested objects, decoded into the payload models through their own `Decodable` conformances.
///
/// It reads the payload with the transports' single-pass ``JSONEnvelope`` scanner instead of building
/// `JSONDecoder`'s value tree, and it only ever answers when it is sure to agree with `JSONDecoder`: anything it does
/// not handle exactly alike (non-ASCII bytes, arrays, duplicate or escaped keys, a number that is not plain JSON, a
/// type mismatch, a missing key, ``JSONValue`` and the types `JSONDecoder` treats specially) makes it return `nil`,
/// and the caller decodes with `JSONDecoder`, which then also produces the error. So values are the same either
/// way; only the cost differs.
enum FlatJSONDecoder {
    /// `json` decoded as `type`, or `nil` when the fast path does not apply (decode with `JSONDecoder` then).
    static func decode<T: Decodable>(_ type: T.Type, from json: Data) -> T? {
        json.withUnsafeBytes { raw -> T? in
            guard let object = object(raw.bindMemory(to: UInt8.self)) else { return nil }
            return decode(type, from: object)
        }
    }

    /// `object` decoded as `type`, member by member for a device model (``DevicePayloadFields``), through `Decoder` otherwise; `nil`
    /// when the fast path does not apply.
    static func decode<T: Decodable>(_ type: T.Type, from object: ObjectView) -> T? {
        if let device = type as? any DevicePayloadFields.Type { return (try? device.init(flat: object)) as? T }
        return try? T(from: ValueDecoder(value: .object(object)))
    }

    /// The JSON object in `bytes` if the fast path applies to it (ASCII, no duplicate or escaped keys, valid values).
    static func object(_ bytes: UnsafeBufferPointer<UInt8>) -> ObjectView? {
        guard !bytes.isEmpty, ASCIIScan.isASCII(bytes) else { return nil }
        return try? ObjectView(bytes)
    }

    /// The fast path does not apply; `JSONDecoder` decides.
    struct Unsupported: Error {}

    /// One validated JSON object: its members, keys unescaped-free and unique, values checked as JSON.
    struct ObjectView {
        let bytes: UnsafeBufferPointer<UInt8>
        let members: [JSONEnvelope.Member]

        init(_ bytes: UnsafeBufferPointer<UInt8>) throws {
            self.bytes = bytes
            members = try JSONEnvelope(scanning: bytes).members
            for (index, member) in members.enumerated() {
                guard !member.keyHasEscapes else { throw Unsupported() }
                for earlier in members[..<index] where Self.sameKey(earlier.key, member.key, bytes) { throw Unsupported() }
                try Self.validate(member, in: bytes)
            }
        }

        /// Every pair of keys is compared: the length and first byte rule out nearly all before `memcmp` (the generic
        /// `elementsEqual` cost more than the scan).
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

        /// A member's key, to match against literals (`case "thingName":`); keys never contain escapes here.
        func key(of member: JSONEnvelope.Member) -> Key { Key(bytes: UnsafeBufferPointer(rebasing: bytes[member.key])) }

        /// A member's value for the scalar accessors (``Value/optional(_:)`` and the like), which reject any other kind of
        /// value; nested objects are not scanned again.
        func scalar(_ member: JSONEnvelope.Member) -> Value { .scalar(member, bytes) }

        /// The string value of `key`, if the object has one (escapes resolved); `nil` for any other value or none.
        func string(_ key: String) -> String? {
            guard let member = member(key), member.kind == .string else { return nil }
            return try? Value.scalar(member, bytes).string()
        }

        func member(_ key: String) -> JSONEnvelope.Member? {
            var key = key
            return key.withUTF8 { wanted in members.first { JSONEnvelope.bytes($0.key, in: bytes, equal: wanted) } }
        }

        func value(of member: JSONEnvelope.Member) throws -> Value {
            switch member.kind {
            case .object: .object(try ObjectView(UnsafeBufferPointer(rebasing: bytes[member.value])))
            case .string, .number, .literal: .scalar(member, bytes)
            case .array: throw Unsupported()
            }
        }
    }

    /// A member's key, matched against string literals in `switch` statements.
    struct Key {
        let bytes: UnsafeBufferPointer<UInt8>

        static func ~= (pattern: StaticString, key: Key) -> Bool {
            pattern.utf8CodeUnitCount == key.bytes.count
                && (key.bytes.isEmpty || memcmp(pattern.utf8Start, key.bytes.baseAddress!, key.bytes.count) == 0)
        }
    }

    /// A value being decoded: an object, or a string, number or literal.
    enum Value: DeviceMemberValue {
        case object(ObjectView)
        case scalar(JSONEnvelope.Member, UnsafeBufferPointer<UInt8>)

        var isNull: Bool {
            guard case .scalar(let member, let bytes) = self, member.kind == .literal else { return false }
            return bytes[member.value].first == UInt8(ascii: "n")
        }

        func string() throws -> String {
            guard case .scalar(let member, let bytes) = self, member.kind == .string else { throw Unsupported() }
            if member.valueHasEscapes { return String(decoding: try JSONEnvelope.unescape(bytes, member.value), as: UTF8.self) }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[member.value]), as: UTF8.self)
        }

        func bool() throws -> Bool {
            guard case .scalar(let member, let bytes) = self, member.kind == .literal, let first = bytes[member.value].first,
                first != UInt8(ascii: "n")
            else { throw Unsupported() }
            return first == UInt8(ascii: "t")
        }

        /// The string's bytes when it needs no unescaping; `nil` for anything else.
        var plainStringBytes: UnsafeBufferPointer<UInt8>? {
            guard case .scalar(let member, let bytes) = self, member.kind == .string, !member.valueHasEscapes else { return nil }
            return UnsafeBufferPointer(rebasing: bytes[member.value])
        }

        /// ``optional(_:)`` of a `String` for `eventType`: a kind's own spelling is that kind's constant, so the field
        /// costs no allocation (it is longer than a string stored inline).
        func optionalEventType() throws -> String? {
            if let kind = plainStringBytes.flatMap(VortexEventKind.init(eventTypeBytes:)) { return kind.eventType }
            return try optional(String.self)
        }

        /// For the device models (``DevicePayloadFields``): what `decodeIfPresent` gives (`nil` for `null`). The device
        /// fields' types are read directly (the checks fold away once specialized); any other through `Decoder`.
        func optional<T: Decodable>(_ type: T.Type) throws -> T? {
            if isNull { return nil }
            if T.self == String.self { return try string() as? T }
            if T.self == Bool.self { return try bool() as? T }
            if T.self == Int.self { return try int() as? T }
            return try FlatJSONDecoder.decodeNested(type, self, codingPath: [])
        }

        /// Plain decimal digits, read without building a string; anything else (a fraction, an exponent, an overflow) is
        /// left to JSONDecoder's own rules.
        func int() throws -> Int {
            guard case .scalar(let member, let bytes) = self, member.kind == .number else { throw Unsupported() }
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

        /// The number's text, for the standard library's parsers (exact for integers, correctly rounded for floats).
        func numberText() throws -> String {
            guard case .scalar(let member, let bytes) = self, member.kind == .number else { throw Unsupported() }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[member.value]), as: UTF8.self)
        }

        func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
            // Plain digits only: a fraction or an exponent is left to JSONDecoder's own rules.
            let text = try numberText()
            guard !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let value = I(text) else { throw Unsupported() }
            return value
        }

        func floatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(_ type: F.Type) throws -> F {
            // Out of range (infinite) is JSONDecoder's to judge.
            guard let value = F(try numberText()), value.isFinite else { throw Unsupported() }
            return value
        }
    }

    /// The `Decoder` over one value.
    struct ValueDecoder: Decoder {
        let value: Value
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard case .object(let object) = value else { throw Unsupported() }
            return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Unsupported() }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(value: value, codingPath: codingPath) }
    }

    /// Decodes a nested value, refusing the types `JSONDecoder` handles in its own way.
    static func decodeNested<T: Decodable>(_ type: T.Type, _ value: Value, codingPath: [any CodingKey]) throws -> T {
        if T.self == JSONValue.self || T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self {
            throw Unsupported()
        }
        return try T(from: ValueDecoder(value: value, codingPath: codingPath))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: ObjectView
        let codingPath: [any CodingKey]

        var allKeys: [Key] { object.members.compactMap { Key(stringValue: String(decoding: object.bytes[$0.key], as: UTF8.self)) } }

        func contains(_ key: Key) -> Bool { object.member(key.stringValue) != nil }

        private func value(_ key: Key) throws -> Value {
            guard let member = object.member(key.stringValue) else { throw Unsupported() }
            return try object.value(of: member)
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key).bool() }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key).string() }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key).floatingPoint(Double.self) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(key).floatingPoint(Float.self) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key).integer(Int.self) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key).integer(Int8.self) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key).integer(Int16.self) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key).integer(Int32.self) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key).integer(Int64.self) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key).integer(UInt.self) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key).integer(UInt8.self) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key).integer(UInt16.self) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key).integer(UInt32.self) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key).integer(UInt64.self) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try FlatJSONDecoder.decodeNested(type, value(key), codingPath: codingPath + [key])
        }

        // One lookup per optional field instead of the default's three (contains, decodeNil, decode).
        private func presentValue(_ key: Key) throws -> Value? {
            guard let member = object.member(key.stringValue) else { return nil }
            let value = try object.value(of: member)
            return value.isNull ? nil : value
        }

        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try presentValue(key)?.string() }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try presentValue(key)?.bool() }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try presentValue(key)?.integer(Int.self) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try presentValue(key)?.floatingPoint(Double.self)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = try presentValue(key) else { return nil }
            return try FlatJSONDecoder.decodeNested(type, value, codingPath: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            guard case .object(let nested) = try value(key) else { throw Unsupported() }
            return KeyedDecodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [key]))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw Unsupported() }
        func superDecoder() throws -> any Decoder { throw Unsupported() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw Unsupported() }
    }

    struct SingleValue: SingleValueDecodingContainer {
        let value: Value
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value.isNull }
        func decode(_ type: Bool.Type) throws -> Bool { try value.bool() }
        func decode(_ type: String.Type) throws -> String { try value.string() }
        func decode(_ type: Double.Type) throws -> Double { try value.floatingPoint(Double.self) }
        func decode(_ type: Float.Type) throws -> Float { try value.floatingPoint(Float.self) }
        func decode(_ type: Int.Type) throws -> Int { try value.integer(Int.self) }
        func decode(_ type: Int8.Type) throws -> Int8 { try value.integer(Int8.self) }
        func decode(_ type: Int16.Type) throws -> Int16 { try value.integer(Int16.self) }
        func decode(_ type: Int32.Type) throws -> Int32 { try value.integer(Int32.self) }
        func decode(_ type: Int64.Type) throws -> Int64 { try value.integer(Int64.self) }
        func decode(_ type: UInt.Type) throws -> UInt { try value.integer(UInt.self) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try value.integer(UInt8.self) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try value.integer(UInt16.self) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try value.integer(UInt32.self) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try value.integer(UInt64.self) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try FlatJSONDecoder.decodeNested(type, value, codingPath: codingPath) }
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
