extension JSONEnvelope {
    /// The single-pass structural scanner behind ``JSONEnvelope``.
    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Keys whose object values are scanned member by member (one level each) instead of skipped.
        let path: [StaticString]
        /// Bit `depth` set: the path's key at that depth was met (only its first occurrence counts, as in
        /// `member(_:in:)`). A bit mask, not an array: no allocation per scan.
        private var met: UInt64 = 0
        /// The bytes the scanner does not check against ASCII characters, OR-ed together: those of strings (whole
        /// words, so some beyond a string's end too) and those skipped inside nested values. So a payload's reader
        /// knows whether it is all ASCII without a pass of its own.
        private var uncheckedBits: UInt64 = 0

        /// After a successful scan: whether every byte is ASCII.
        var scannedOnlyASCII: Bool { uncheckedBits & 0x8080_8080_8080_8080 == 0 }

        /// `path` deeper than 64 keys is cut to 64.
        init(bytes: UnsafeBufferPointer<UInt8>, path: [StaticString] = []) {
            self.bytes = bytes
            self.path = path.count > 64 ? Array(path.prefix(64)) : path
        }

        /// Scans the one top-level object, calling `visit` with each member once its value has been scanned: the
        /// top-level members at depth 0, the members of the object under `path[d]` at depth `d + 1` (so they come
        /// before the member holding them).
        mutating func scanTopLevelObject(_ visit: (_ depth: Int, _ member: Member) -> Void) throws(JSONScanError) {
            skipWhitespace()
            try scanObject(depth: 0, visit)
            skipWhitespace()
            guard index == bytes.count else { throw fail("trailing characters after the object") }
        }

        /// At an opening brace: visits the object's members, through its closing brace.
        private mutating func scanObject(depth: Int, _ visit: (Int, Member) -> Void) throws(JSONScanError) {
            try expect(UInt8(ascii: "{"), "expected an object")
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let (key, keyEscapes) = try scanString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "expected ':'")
                skipWhitespace()
                let onPath = depth < path.count && met & (1 << depth) == 0 && isKey(key, escaped: keyEscapes, path[depth])
                if onPath { met |= 1 << depth }
                if onPath, peek() == UInt8(ascii: "{") {
                    // On the path: the object's members are visited in this same pass.
                    let start = index
                    try scanObject(depth: depth + 1, visit)
                    visit(depth, Member(key: key, keyHasEscapes: keyEscapes, value: start..<index, kind: .object, valueHasEscapes: false))
                } else {
                    let (value, kind, valueEscapes) = try scanValue()
                    visit(depth, Member(key: key, keyHasEscapes: keyEscapes, value: value, kind: kind, valueHasEscapes: valueEscapes))
                }
                skipWhitespace()
                guard let next = peek() else { throw fail("unterminated object") }
                guard next == UInt8(ascii: "}") || next == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
                index += 1
                if next == UInt8(ascii: "}") { return }
            }
        }

        private func isKey(_ key: Range<Int>, escaped: Bool, _ wanted: StaticString) -> Bool {
            let member = Member(key: key, keyHasEscapes: escaped, value: key, kind: .string, valueHasEscapes: false)
            return member.hasKey(wanted, in: bytes)
        }

        private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        private func fail(_ what: String) -> JSONScanError { .malformed(what, offset: index) }

        private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONScanError) {
            guard peek() == byte else { throw fail(what) }
            index += 1
        }

        private mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        /// At an opening quote: returns the characters' offsets (without quotes) and whether escapes occur.
        private mutating func scanString() throws(JSONScanError) -> (Range<Int>, Bool) {
            index += 1
            let start = index
            var escapes = false
            while index < bytes.count {
                skipPlainStringBytes()
                guard index < bytes.count else { break }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    defer { index += 1 }
                    return (start..<index, escapes)
                }
                if byte == UInt8(ascii: "\\") {
                    escapes = true
                    if index + 1 < bytes.count { uncheckedBits |= UInt64(bytes[index + 1]) }
                    index += 2
                    continue
                }
                uncheckedBits |= UInt64(byte)
                if byte < 0x20 { throw fail("control character in string") }
                index += 1
            }
            throw .malformed("unterminated string", offset: start - 1)
        }

        /// Skips string bytes that need no attention (not a quote, a backslash or a control character) eight at a
        /// time: strings are most of every frame, and each event's bytes are scanned more than once.
        private mutating func skipPlainStringBytes() {
            guard let base = bytes.baseAddress else { return }
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                uncheckedBits |= word
                // A byte equal to b makes (x - 1) borrow into its high bit where x = word ^ b: exact as a test.
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let special =
                    ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
                if special & highs != 0 {
                    // The lowest flagged byte is exact (borrows only run upwards): step straight to it.
                    index += (special & highs).trailingZeroBitCount >> 3
                    return
                }
                index += 8
            }
        }

        private mutating func scanValue() throws(JSONScanError) -> (Range<Int>, Kind, Bool) {
            guard let first = peek() else { throw fail("expected a value") }
            let start = index
            switch first {
            case UInt8(ascii: "\""):
                let (range, escapes) = try scanString()
                return (range, .string, escapes)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                try skipNested()
                return (start..<index, first == UInt8(ascii: "{") ? .object : .array, false)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                while let byte = peek(), Self.isNumberByte(byte) { index += 1 }
                return (start..<index, .number, false)
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                while let byte = peek(), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) { index += 1 }
                guard Self.isLiteral(bytes[start..<index]) else { throw .malformed("invalid literal", offset: start) }
                return (start..<index, .literal, false)
            default:
                throw fail("unexpected character")
            }
        }

        /// `true`, `false` or `null`, compared byte by byte (every device event carries one: the generic comparison
        /// against three strings cost more than scanning the rest of the value).
        private static func isLiteral(_ word: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            let start = word.startIndex
            switch (word.count, word.first) {
            case (4, UInt8(ascii: "t")?):
                return word[start + 1] == UInt8(ascii: "r") && word[start + 2] == UInt8(ascii: "u") && word[start + 3] == UInt8(ascii: "e")
            case (4, UInt8(ascii: "n")?):
                return word[start + 1] == UInt8(ascii: "u") && word[start + 2] == UInt8(ascii: "l") && word[start + 3] == UInt8(ascii: "l")
            case (5, UInt8(ascii: "f")?):
                return word[start + 1] == UInt8(ascii: "a") && word[start + 2] == UInt8(ascii: "l") && word[start + 3] == UInt8(ascii: "s")
                    && word[start + 4] == UInt8(ascii: "e")
            default:
                return false
            }
        }

        private static func isNumberByte(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        }

        /// Skips a balanced object or array, stepping over strings so brackets inside them do not count.
        ///
        /// The open brackets are a stack of bits (1: `{`, 0: `[`), 64 deep per word; no allocation unless a value
        /// nests deeper than that.
        private mutating func skipNested() throws(JSONScanError) {
            var bits: UInt64 = 0
            var depth = 0
            var spilled: [UInt64] = []  // full words below the current one, outermost first
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    _ = try scanString()
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if depth > 0 && depth % 64 == 0 {
                        spilled.append(bits)
                        bits = 0
                    }
                    bits = bits << 1 | (byte == UInt8(ascii: "{") ? 1 : 0)
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard depth > 0, (bits & 1 == 1) == (byte == UInt8(ascii: "}")) else { throw fail("mismatched bracket") }
                    bits >>= 1
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return
                    }
                    if depth % 64 == 0 { bits = spilled.removeLast() }
                default: uncheckedBits |= UInt64(byte)
                }
                index += 1
            }
            throw .malformed("unterminated value", offset: start)
        }
    }
}
