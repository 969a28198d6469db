import Foundation

/// The top-level members of one JSON object, found in a single pass without building a tree.
///
/// Transports scan every inbound frame once with this: they read the few short fields they route on
/// (`type`, `id`) and slice or unescape the payload bytes exactly once, instead of decoding the frame into
/// `[String: Any]` and re-encoding the payload. Values are skipped structurally (strings, nesting); they are
/// validated later, when the consumer decodes the payload.
package struct JSONEnvelope: Sendable {
    /// One `"key": value` member, as byte offsets into the scanned buffer.
    package struct Member: Sendable, Equatable {
        /// Offsets of the key's characters, without the quotes.
        package var key: Range<Int>
        /// Whether the key contains escapes (then it is compared after unescaping).
        package var keyHasEscapes: Bool
        /// Offsets of the value: for strings, the characters without the quotes; otherwise the whole value.
        package var value: Range<Int>
        /// The kind of value.
        package var kind: Kind
        /// Whether a string value contains escapes.
        package var valueHasEscapes: Bool

        /// Offsets of the value as JSON text: for strings, quotes included.
        package var rawValue: Range<Int> {
            kind == .string ? (value.lowerBound - 1)..<(value.upperBound + 1) : value
        }

        /// The value as a string (unescaped); `nil` when it is not a string or its escapes are invalid.
        package func string(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
            guard kind == .string else { return nil }
            if !valueHasEscapes { return String(decoding: UnsafeBufferPointer(rebasing: bytes[value]), as: UTF8.self) }
            return (try? JSONEnvelope.unescape(bytes, value)).map { String(decoding: $0, as: UTF8.self) }
        }

        /// Whether the member's key is `key` (an escaped key is compared after unescaping).
        package func hasKey(_ key: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            key.withUTF8Buffer { wanted in
                if keyHasEscapes {
                    guard let decoded = try? JSONEnvelope.unescape(bytes, self.key) else { return false }
                    return decoded.elementsEqual(wanted)
                }
                return JSONEnvelope.bytes(self.key, in: bytes, equal: wanted)
            }
        }
    }

    /// The kind of a member's value.
    package enum Kind: Sendable, Equatable {
        /// A string (offsets exclude the quotes).
        case string
        /// An object.
        case object
        /// An array.
        case array
        /// A number.
        case number
        /// `true`, `false` or `null`.
        case literal

        /// Written out and inlinable: the transports and the notifier compare kinds for every member of every frame,
        /// and the synthesized `==` was called through `Equatable`'s witness table from the other modules.
        @inlinable
        package static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case (.string, .string), (.object, .object), (.array, .array), (.number, .number), (.literal, .literal): true
            default: false
            }
        }
    }

    /// The members in document order.
    package private(set) var members: [Member]

    /// Scans `bytes`, which must hold exactly one JSON object (surrounding white space allowed).
    package init(scanning bytes: UnsafeBufferPointer<UInt8>) throws(JSONScanError) {
        var scanner = Scanner(bytes: bytes)
        var members: [Member] = []
        members.reserveCapacity(6)
        try scanner.scanTopLevelObject { _, member in members.append(member) }
        self.members = members
    }

    /// Scans `bytes` like ``init(scanning:)`` and, in the same pass, the members of the object under `path[0]`, of
    /// the object under `path[1]` inside it, and so on, without storing anything: for envelopes whose payload sits a
    /// few objects deep (graphql-transport-ws `payload.data`), so those bytes are not scanned again. `visit` is called
    /// with each member once its value has been scanned, with its depth: 0 for the top-level members, `d + 1` for the
    /// members of the object under `path[d]` (so those come before the member holding them); only the first occurrence
    /// of a path key counts, and a path deeper than 64 keys descends only its first 64. Returns whether every byte of
    /// `bytes` is ASCII, found in the same pass.
    @discardableResult
    package static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, descendingInto path: [StaticString] = [],
        visit: (_ depth: Int, _ member: Member) -> Void
    ) throws(JSONScanError) -> Bool {
        var scanner = Scanner(bytes: bytes, path: path)
        try scanner.scanTopLevelObject(visit)
        return scanner.scannedOnlyASCII
    }

    /// The member named `key`, if present (the first one, when a key repeats).
    package func member(_ key: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Member? {
        members.first { $0.hasKey(key, in: bytes) }
    }

    /// Whether the bytes at `range` of `bytes` are exactly `wanted` (a key compared with `memcmp`, not byte by byte).
    package static func bytes(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>, equal wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        guard range.count == wanted.count else { return false }
        guard let base = bytes.baseAddress, let other = wanted.baseAddress else { return range.isEmpty }
        return memcmp(base + range.lowerBound, other, range.count) == 0
    }

    /// The string value of `key`; `nil` when absent or not a string.
    package func string(_ key: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        member(key, in: bytes)?.string(in: bytes)
    }

    /// The raw bytes of `key`'s value (for strings, the unescaped characters); `nil` when absent.
    package func valueBytes(_ key: StaticString, in bytes: UnsafeBufferPointer<UInt8>) throws(JSONScanError) -> Data? {
        guard let member = member(key, in: bytes) else { return nil }
        if member.kind == .string && member.valueHasEscapes { return try JSONEnvelope.unescape(bytes, member.value) }
        return Data(UnsafeBufferPointer(rebasing: bytes[member.value]))
    }

    /// Decodes the characters of a JSON string (offsets without quotes) into UTF-8 bytes.
    ///
    /// The result is never longer than the escaped text, so it is written once into a buffer of that size (no
    /// per-byte appends: this runs for every AppSync event).
    package static func unescape(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(JSONScanError) -> Data {
        guard !range.isEmpty else { return Data() }
        // Uninitialised memory handed to Data as is: no zero fill, no resize, no exclusivity-checked mutation.
        let output = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: range.count)
        let written: Int
        do {
            written = try unescape(bytes, range, into: output)
        } catch {
            output.deallocate()
            throw error
        }
        guard written > 0 else {
            output.deallocate()
            return Data()
        }
        return Data(bytesNoCopy: output.baseAddress!, count: written, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Writes the unescaped bytes of `range` into `output` (at least `range.count` long); returns how many.
    private static func unescape(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(JSONScanError) -> Int {
        var written = 0
        var index = range.lowerBound
        while index < range.upperBound {
            // Plain bytes eight at a time: each word is stored as it is and the output advances to the first backslash
            // in it (what follows is overwritten). Unescaping never lengthens, so the store stays within `output`.
            if index + 8 <= range.upperBound, let base = bytes.baseAddress, let out = output.baseAddress {
                let raw = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(out + written).storeBytes(of: raw, as: UInt64.self)
                let word = UInt64(littleEndian: raw)
                // Exact for the lowest flagged byte, as in the scanner's `skipPlainStringBytes()`.
                let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
                let found = (backslash &- 0x0101_0101_0101_0101) & ~backslash & 0x8080_8080_8080_8080
                let plain = found == 0 ? 8 : found.trailingZeroBitCount >> 3
                index += plain
                written += plain
                if found == 0 { continue }
            }
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                output[written] = byte
                written += 1
                index += 1
                continue
            }
            guard index + 1 < range.upperBound else { throw .malformed("dangling escape", offset: index) }
            let escaped = bytes[index + 1]
            index += 2
            let plain: UInt8
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): plain = escaped
            case UInt8(ascii: "b"): plain = 0x08
            case UInt8(ascii: "f"): plain = 0x0C
            case UInt8(ascii: "n"): plain = 0x0A
            case UInt8(ascii: "r"): plain = 0x0D
            case UInt8(ascii: "t"): plain = 0x09
            case UInt8(ascii: "u"):
                var scalar = try hex4(bytes, at: index, limit: range.upperBound)
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard index + 6 <= range.upperBound, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { throw .malformed("unpaired surrogate", offset: index) }
                    let low = try hex4(bytes, at: index + 2, limit: range.upperBound)
                    guard (0xDC00...0xDFFF).contains(low) else { throw .malformed("unpaired surrogate", offset: index) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw .malformed("unpaired surrogate", offset: index)
                }
                guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else {
                    throw .malformed("invalid scalar", offset: index)
                }
                // At most 4 UTF-8 bytes for 6 (or 12) escaped ones: the output stays within range.count.
                for unit in encoded {
                    output[written] = unit
                    written += 1
                }
                continue
            default:
                throw .malformed("invalid escape", offset: index - 1)
            }
            output[written] = plain
            written += 1
        }
        return written
    }

    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, limit: Int) throws(JSONScanError) -> UInt32 {
        guard index + 4 <= limit else { throw .malformed("short \\u escape", offset: index) }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[index + offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw .malformed("bad hex digit in \\u escape", offset: index + offset)
            }
            value = value << 4 | digit
        }
        return value
    }
}

/// Why a frame could not be scanned as a JSON object.
package enum JSONScanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not a well-formed JSON object at `offset`.
    case malformed(String, offset: Int)

    package var description: String {
        switch self {
        case .malformed(let what, let offset): "malformed JSON at byte \(offset): \(what)"
        }
    }
}

extension String {
    /// Runs `body` over the string's UTF-8 bytes without copying a native string.
    @inlinable
    package func withContiguousUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
