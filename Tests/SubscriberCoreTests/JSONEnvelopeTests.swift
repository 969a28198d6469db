import Foundation
import RealtimeTesting
import Testing

@testable import SubscriberCore

/// Scans `text` and hands the envelope and the scanned bytes to `body` while the bytes are alive.
private func withEnvelope<R>(
    _ text: String, _ body: (JSONEnvelope, UnsafeBufferPointer<UInt8>) throws -> R
) throws -> R {
    try Array(text.utf8).withUnsafeBufferPointer { bytes in
        let envelope = try JSONEnvelope(scanning: bytes)
        return try body(envelope, bytes)
    }
}

/// Scans `text` and returns the error it throws (`nil` when it scans).
private func scanError(_ text: String) -> JSONScanError? {
    Array(text.utf8).withUnsafeBufferPointer { bytes in
        do throws(JSONScanError) {
            _ = try JSONEnvelope(scanning: bytes)
            return nil
        } catch {
            return error
        }
    }
}

/// The text at `range` of `bytes`.
private func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
}

/// Unescapes the whole of `escaped` (the characters of a JSON string, without quotes).
private func unescape(_ escaped: String) throws -> Data {
    try Array(escaped.utf8).withUnsafeBufferPointer { buffer in try JSONEnvelope.unescape(buffer, 0..<buffer.count) }
}

@Suite("JSONEnvelope scanning")
struct JSONEnvelopeScanningTests {
    @Test(
        "descending: the visitor sees the path's objects' members (the first of a repeated key, escaped keys too), inner ones first"
    )
    func descendingAndVisiting() throws {
        let frame =
            #"{"id":"1","p\u0061yload":{"x":[{"data":0}],"data":{"f":{"g":1},"h":"i"},"data":{"z":2}},"payload":{"data":{}},"type":"next"}"#
        try Array(frame.utf8).withUnsafeBufferPointer { bytes in
            var visited: [(Int, String)] = []
            try JSONEnvelope.scan(bytes, descendingInto: ["payload", "data", "f"]) { depth, member in
                visited.append((depth, text(bytes, member.key)))
            }
            let expected: [(Int, String)] = [
                (0, "id"), (1, "x"), (3, "g"), (2, "f"), (2, "h"), (1, "data"), (1, "data"), (0, #"p\u0061yload"#), (0, "payload"),
                (0, "type"),
            ]
            #expect(visited.map(\.0) == expected.map(\.0))
            #expect(visited.map(\.1) == expected.map(\.1))
            // A path key whose value is not an object is met (so later ones are not descended) but lists nothing.
            var depths: [Int] = []
            try JSONEnvelope.scan(bytes, descendingInto: ["id", "payload"]) { depth, _ in depths.append(depth) }
            #expect(depths == [0, 0, 0, 0])
        }
    }

    static let frame = #"""
        {"type":"data","id":"42","n":-1.5e3,"t":true,"f":false,"z":null,"o":{"x":[1,{"y":"}"}]},"arr":[],"e":"a\"b"}
        """#

    @Test(
        "each member has the right kind and value range",
        arguments: [
            ("type", JSONEnvelope.Kind.string, "data"),
            ("id", .string, "42"),
            ("n", .number, "-1.5e3"),
            ("t", .literal, "true"),
            ("f", .literal, "false"),
            ("z", .literal, "null"),
            ("o", .object, #"{"x":[1,{"y":"}"}]}"#),
            ("arr", .array, "[]"),
            ("e", .string, #"a\"b"#),
        ] as [(String, JSONEnvelope.Kind, String)])
    func membersInDocumentOrder(key: String, kind: JSONEnvelope.Kind, value: String) throws {
        try withEnvelope(Self.frame) { envelope, bytes in
            #expect(envelope.members.count == 9)
            let member = try #require(envelope.members.first { text(bytes, $0.key) == key })
            #expect(member.kind == kind)
            #expect(text(bytes, member.value) == value)
            #expect(member.keyHasEscapes == false)
            #expect(member.valueHasEscapes == (key == "e"))
        }
    }

    @Test func keysAreInDocumentOrder() throws {
        let keys = try withEnvelope(Self.frame) { envelope, bytes in envelope.members.map { text(bytes, $0.key) } }
        #expect(keys == ["type", "id", "n", "t", "f", "z", "o", "arr", "e"])
    }

    @Test func memberLooksUpByKey() throws {
        try withEnvelope(Self.frame) { envelope, bytes in
            let id = try #require(envelope.member("id", in: bytes))
            #expect(text(bytes, id.value) == "42")
            let object = try #require(envelope.member("o", in: bytes))
            #expect(object.kind == .object)
            #expect(envelope.member("missing", in: bytes) == nil)
            // A prefix or an extension of a key is a different key.
            #expect(envelope.member("ty", in: bytes) == nil)
            #expect(envelope.member("types", in: bytes) == nil)
            // Nested keys are not top-level members.
            #expect(envelope.member("x", in: bytes) == nil)
            #expect(envelope.member("y", in: bytes) == nil)
        }
    }

    @Test func emptyObjectHasNoMembers() throws {
        for text in ["{}", "{ }", " \n\t{\r\n}\n "] {
            let count = try withEnvelope(text) { envelope, _ in envelope.members.count }
            #expect(count == 0, "\(text.debugDescription)")
        }
    }

    @Test func whiteSpaceAroundTokensIsNotPartOfValues() throws {
        try withEnvelope(" \n{ \"a\" :\t1 ,\r\n \"b\" : \"x\" , \"c\" : [ 1 ] , \"d\" : null }\n") { envelope, bytes in
            #expect(envelope.members.map { text(bytes, $0.key) } == ["a", "b", "c", "d"])
            #expect(envelope.members.map { text(bytes, $0.value) } == ["1", "x", "[ 1 ]", "null"])
        }
    }

    @Test func stringReturnsUnescapedStringsOnly() throws {
        let frame = #"{"plain":"abc","escaped":"a\"b\\c\u00e9\n","num":1,"obj":{"k":"v"},"bad":"\x","empty":""}"#
        try withEnvelope(frame) { envelope, bytes in
            #expect(envelope.string("plain", in: bytes) == "abc")
            #expect(envelope.string("escaped", in: bytes) == "a\"b\\cé\n")
            #expect(envelope.string("empty", in: bytes) == "")
            #expect(envelope.string("num", in: bytes) == nil)
            #expect(envelope.string("obj", in: bytes) == nil)
            #expect(envelope.string("bad", in: bytes) == nil)
            #expect(envelope.string("missing", in: bytes) == nil)
        }
    }

    @Test func valueBytesSlicesOrUnescapes() throws {
        let frame = #"{"s":"x\/y","raw":"plain","o":{"a":[1,"]"]},"n":12.5,"l":false,"bad":"\q"}"#
        try withEnvelope(frame) { (envelope, bytes) throws in
            #expect(try envelope.valueBytes("s", in: bytes) == Data("x/y".utf8))
            #expect(try envelope.valueBytes("raw", in: bytes) == Data("plain".utf8))
            #expect(try envelope.valueBytes("o", in: bytes) == Data(#"{"a":[1,"]"]}"#.utf8))
            #expect(try envelope.valueBytes("n", in: bytes) == Data("12.5".utf8))
            #expect(try envelope.valueBytes("l", in: bytes) == Data("false".utf8))
            #expect(try envelope.valueBytes("missing", in: bytes) == nil)
            #expect(throws: JSONScanError.self) { try envelope.valueBytes("bad", in: bytes) }
        }
    }

    @Test func repeatedKeyFindsTheFirst() throws {
        try withEnvelope(#"{"k":"first","k":"second"}"#) { envelope, bytes in
            #expect(envelope.members.count == 2)
            #expect(envelope.string("k", in: bytes) == "first")
        }
    }

    @Test func escapedKeysAreComparedAfterUnescaping() throws {
        try withEnvelope(#"{"t\u0079pe":"data","i\"d":"x","\u0069d":"y"}"#) { envelope, bytes in
            #expect(envelope.members.map(\.keyHasEscapes) == [true, true, true])
            #expect(envelope.string("type", in: bytes) == "data")
            // `i"d` is not `id`; the escaped `\u0069d` is.
            #expect(envelope.string("id", in: bytes) == "y")
        }
    }

    @Test(
        "brackets and quotes inside strings do not confuse skipping",
        arguments: [
            (#"{"a":{"b":"}]{["},"c":"d"}"#, #"{"b":"}]{["}"#),
            (#"{"a":["\"]","\\"],"c":"d"}"#, #"["\"]","\\"]"#),
            (#"{"a":[{"k":"[[[["},[],{}],"c":"d"}"#, #"[{"k":"[[[["},[],{}]"#),
            (#"{"a":{"}":"{","]":["]"]},"c":"d"}"#, #"{"}":"{","]":["]"]}"#),
        ])
    func bracketsInsideStrings(frame: String, nested: String) throws {
        try withEnvelope(frame) { envelope, bytes in
            #expect(envelope.members.count == 2)
            let a = try #require(envelope.member("a", in: bytes))
            #expect(text(bytes, a.value) == nested)
            #expect(envelope.string("c", in: bytes) == "d")
        }
    }

    @Test func deeplyNestedValuesAreSkipped() throws {
        let depth = 200
        let nested = String(repeating: "[{\"k\":", count: depth) + "1" + String(repeating: "}]", count: depth)
        try withEnvelope(#"{"deep":\#(nested),"after":"ok"}"#) { envelope, bytes in
            let deep = try #require(envelope.member("deep", in: bytes))
            #expect(deep.kind == .array)
            #expect(text(bytes, deep.value) == nested)
            #expect(envelope.string("after", in: bytes) == "ok")
        }
    }

    @Test func nonASCIIBytesPassThroughStrings() throws {
        try withEnvelope(#"{"é🚀":"日本語 🚀"}"#) { envelope, bytes in
            let member = try #require(envelope.members.first)
            #expect(text(bytes, member.key) == "é🚀")
            #expect(text(bytes, member.value) == "日本語 🚀")
            #expect(member.valueHasEscapes == false)
        }
    }

    /// Objects with `~` where a high byte must be seen: in a long string (read a word at a time), in a short one and
    /// after an escape (byte by byte: too near the end for a word, and past the words read before), and between numbers
    /// of an array the scan skips.
    static let markedObjects = [
        #"{"id":"0123456789abcdef~xyz","k":"\"q","n":{"in":"side","a":[1, "s", {"x":true}]},"z":null}"#, #"{"k":"~"}"#,
        #"{"k":"abcdefgh\~"}"#, #"{"a":[0,1,2,3,4,5,6,7,8,~9]}"#,
    ]

    @Test(
        "a scan says whether the bytes are ASCII: a high byte at any offset it accepts is seen, in strings and skipped values",
        arguments: markedObjects)
    func scanSeesEveryHighByte(marked: String) throws {
        let base = Array(marked.utf8)
        let marker = try #require(base.firstIndex(of: UInt8(ascii: "~")))
        func scan(_ bytes: [UInt8]) -> Bool? { bytes.withUnsafeBufferPointer { bytes in try? JSONEnvelope.scan(bytes) { _, _ in } } }
        #expect(scan(base) == true)
        var atMarker = base
        atMarker[marker] = 0xE9
        #expect(scan(atMarker) == false)
        for offset in base.indices {
            var mutated = base
            mutated[offset] = 0xE9
            // Where the scan accepts the byte, it must say so.
            if let result = scan(mutated) { #expect(!result, "0xE9 at \(offset) scanned as ASCII") }
        }
    }
}

@Suite("JSONEnvelope malformed input")
struct JSONEnvelopeMalformedTests {
    /// Malformed frames and the byte offset the error must point at.
    @Test(
        "malformed frames throw at the offending byte",
        arguments: [
            // Not an object.
            ("", 0),
            ("   ", 3),
            ("[1,2]", 0),
            (#""a""#, 0),
            ("  42", 2),
            ("null", 0),
            // Trailing garbage.
            (#"{"a":1}x"#, 7),
            (#"{"a":1}{}"#, 7),
            (#"{"a":1} ,"#, 8),
            // Unterminated strings (the offset of the opening quote).
            (#"{"a":"abc"#, 5),
            (#"{"a"#, 1),
            (#"{"a":"\"}"#, 5),
            (#"{"a":["x]}"#, 6),
            (#"{"a":"x\"#, 5),
            // Mismatched or unterminated brackets.
            (#"{"a":[1,2}"#, 9),
            (#"{"a":{"b":1]}"#, 11),
            (#"{"a":[1,2"#, 5),
            (#"{"a":{"#, 5),
            // Control characters in strings, keys and nested strings.
            ("{\"a\":\"x\ny\"}", 7),
            ("{\"a\tb\":1}", 3),
            ("{\"a\":[\"x\u{01}\"]}", 8),
            ("{\"a\":\"\u{1f}\"}", 6),
            // Bad literals.
            (#"{"a":nul}"#, 5),
            (#"{"a":nulll}"#, 5),
            (#"{"a":tru}"#, 5),
            (#"{"a":falsey}"#, 5),
            (#"{"a":True}"#, 5),
            (#"{"a":undefined}"#, 5),
            (#"{"a":trve}"#, 5),
            (#"{"a":nill}"#, 5),
            (#"{"a":fals}"#, 5),
            (#"{"a":falze}"#, 5),
            (#"{"a":tnul}"#, 5),
            // Other structure errors.
            (#"{"a":1,}"#, 7),
            (#"{"a" 1}"#, 5),
            (#"{"a":}"#, 5),
            (#"{"a":1"#, 6),
            (#"{"a":"#, 5),
            (#"{a:1}"#, 1),
            ("{,}", 1),
            (#"{"a":'x'}"#, 5),
            ("{", 1),
        ])
    func malformed(frame: String, offset: Int) {
        let error = scanError(frame)
        guard case .malformed(_, let actual) = error else {
            Issue.record("\(frame.debugDescription) scanned without error")
            return
        }
        #expect(actual == offset, "\(frame.debugDescription): \(String(describing: error))")
    }

    @Test(
        "a mismatched bracket is found at any depth, across the scanner's 64-deep words",
        arguments: [1, 2, 63, 64, 65, 66, 127, 128, 129, 200])
    func deepMismatchedBrackets(depth: Int) throws {
        // Alternating arrays and objects, `depth` deep, closed innermost first.
        let openers = (0..<depth).map { $0 % 2 == 0 ? "[" : #"{"k":"# }
        let closers = (0..<depth).map { $0 % 2 == 0 ? "]" : "}" }.reversed()
        let prefix = #"{"a":"# + openers.joined() + "1"
        let valid = prefix + closers.joined() + "}"
        #expect(scanError(valid) == nil, "depth \(depth) must scan")
        // Each closer in turn replaced by the other kind: the error points at it.
        for (position, closer) in closers.enumerated() {
            var broken = Array(closers)
            broken[position] = closer == "]" ? "}" : "]"
            let frame = prefix + broken.joined() + "}"
            guard case .malformed(_, let offset)? = scanError(frame) else {
                Issue.record("depth \(depth), closer \(position) swapped: scanned without error")
                continue
            }
            #expect(offset == prefix.utf8.count + position, "depth \(depth), closer \(position) swapped")
        }
    }

    @Test func missingCommaIsReportedAtTheOffendingByte() {
        // `{"a":1 "b":2}`: the byte that should have been ',' or '}' is the quote at offset 7.
        let error = scanError(#"{"a":1 "b":2}"#)
        guard case .malformed(_, let offset) = error else {
            Issue.record("scanned without error")
            return
        }
        #expect(offset == 7)
    }

    @Test func errorDescriptionNamesTheOffset() {
        let error = JSONScanError.malformed("expected an object", offset: 3)
        #expect(error.description == "malformed JSON at byte 3: expected an object")
    }
}

@Suite("JSONEnvelope.unescape")
struct JSONEnvelopeUnescapeTests {
    @Test(
        "valid escapes decode to UTF-8",
        arguments: [
            ("plain", "plain"),
            ("", ""),
            (#"a\"b"#, "a\"b"),
            (#"\\"#, "\\"),
            (#"\/"#, "/"),
            (#"\n"#, "\n"),
            (#"\t"#, "\t"),
            (#"\r"#, "\r"),
            (#"\b"#, "\u{08}"),
            (#"\f"#, "\u{0C}"),
            (#"\u00e9"#, "é"),
            (#"\u00E9"#, "é"),
            (#"\u20ac"#, "€"),
            (#"\u0000"#, "\u{0}"),
            (#"\u001f"#, "\u{1f}"),
            (#"\ud83d\ude80"#, "🚀"),
            (#"\uD83D\uDE80"#, "🚀"),
            (#"caf\u00e9 \ud83d\ude80!"#, "café 🚀!"),
            (#"\\n"#, #"\n"#),
            (#"\\\""#, #"\""#),
            (#"日本\n語"#, "日本\n語"),
            (#"\u3042\uD834\uDD1E"#, "あ𝄞"),
        ])
    func valid(escaped: String, expected: String) throws {
        let data = try unescape(escaped)
        #expect(Array(data) == Array(expected.utf8))
    }

    @Test(
        "invalid escapes throw",
        arguments: [
            #"\x"#,
            #"\U00e9"#,
            #"\'"#,
            #"\ "#,
            #"\ud83d"#,
            #"\ud83dabcdef"#,
            #"\ud83d\u0041"#,
            #"\ud83d\ud83d"#,
            #"\ud83d\n"#,
            #"\ude80"#,
            #"\ude80\ud83d"#,
            #"\u12"#,
            #"\u12G4"#,
            #"\u-123"#,
            #"\ud83d\u12"#,
            #"abc\"#,
            #"\"#,
        ])
    func invalid(escaped: String) {
        #expect(throws: JSONScanError.self) { try unescape(escaped) }
    }

    @Test func unescapeStaysInsideTheRange() throws {
        let bytes = Array(#"xx\nyy\u00e9"#.utf8)
        try bytes.withUnsafeBufferPointer { (buffer) throws in
            #expect(try JSONEnvelope.unescape(buffer, 2..<4) == Data("\n".utf8))
            #expect(try JSONEnvelope.unescape(buffer, 0..<2) == Data("xx".utf8))
            #expect(try JSONEnvelope.unescape(buffer, 4..<6) == Data("yy".utf8))
            // The range ends inside escapes: the bytes after it must not be read.
            #expect(throws: JSONScanError.self) { try JSONEnvelope.unescape(buffer, 2..<3) }
            #expect(throws: JSONScanError.self) { try JSONEnvelope.unescape(buffer, 6..<10) }
            #expect(try JSONEnvelope.unescape(buffer, 6..<12) == Data("é".utf8))
        }
    }

    /// Escaped strings of every length, with backslashes at every offset of the eight-byte words the plain runs are
    /// copied in, and the bytes after the range full of backslashes: against Foundation's own JSON decoding. Seeded.
    @Test func unescapeAgreesWithFoundationAtEveryWordOffset() throws {
        var random = SplitMix64(seed: 0x5EED_0E5C)
        let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "é", "€", "🚀", "日", "abcdefgh", "xyz"]
        for length in 0..<48 {
            for _ in 0..<12 {
                let original = (0..<length).map { _ in pieces.randomElement(using: &random)! }.joined()
                let encoded = try JSONEncoder().encode(original)
                let escaped = Array(encoded.dropFirst().dropLast())
                let padded = escaped + Array(repeating: UInt8(ascii: "\\"), count: 9)
                let data = try padded.withUnsafeBufferPointer { try JSONEnvelope.unescape($0, 0..<escaped.count) }
                #expect(String(decoding: data, as: UTF8.self) == original, "\(original.debugDescription)")
            }
        }
    }
}

@Suite("JSONString → JSONEnvelope round trip")
struct JSONRoundTripTests {
    static let strings: [String] = [
        "",
        "plain",
        "</script><b>&amp;</b>",
        "a/b//c",
        "\"quoted\"",
        "back\\slash\\",
        "\\u00e9 is not an escape here",
        "\u{0}\u{1}\u{8}\u{9}\u{a}\u{b}\u{c}\u{d}\u{1b}\u{1f}\u{7f}",
        "line\nbreak\r\n\ttab",
        "café",
        "e\u{301}",
        "日本語",
        "🚀",
        "👨‍👩‍👧 family",
        "\u{2028}\u{2029}\u{feff}",
        #"{"json":[1,"]",{"x":"}"}]}"#,
        "mixed <\"/\\\n🚀é\u{1}>",
    ]

    @Test("quoted strings scan and unescape back exactly", arguments: strings)
    func roundTripAsValue(original: String) throws {
        let frame = JSONString.object([
            (key: "before", json: "[1,\"]\"]"),
            (key: "k", json: JSONString.quoted(original)),
            (key: "after", json: "true"),
        ])
        try withEnvelope(frame) { envelope, bytes in
            #expect(envelope.members.count == 3)
            let member = try #require(envelope.member("k", in: bytes))
            #expect(member.kind == .string)
            #expect(try envelope.valueBytes("k", in: bytes).map(Array.init) == Array(original.utf8))
            let string = try #require(envelope.string("k", in: bytes))
            #expect(Array(string.utf8) == Array(original.utf8))
            #expect(envelope.member("after", in: bytes)?.kind == .literal)
        }
    }

    @Test("quoted strings used as keys unescape back exactly", arguments: strings)
    func roundTripAsKey(original: String) throws {
        let frame = JSONString.object([(key: original, json: "1")])
        try withEnvelope(frame) { envelope, bytes in
            let member = try #require(envelope.members.first)
            let key = try JSONEnvelope.unescape(bytes, member.key)
            #expect(Array(key) == Array(original.utf8))
        }
    }

    @Test("quoted strings nested in arrays are skipped as whole values", arguments: strings)
    func roundTripNested(original: String) throws {
        let nested = JSONString.array([
            JSONString.quoted(original), JSONString.object([(key: original, json: JSONString.quoted(original))]),
        ])
        let frame = JSONString.object([(key: "n", json: nested), (key: "tail", json: #""end""#)])
        try withEnvelope(frame) { (envelope, bytes) throws in
            #expect(try envelope.valueBytes("n", in: bytes) == Data(nested.utf8))
            #expect(envelope.string("tail", in: bytes) == "end")
        }
    }
}

@Suite("JSONEnvelope strings against JSONSerialization")
struct JSONEnvelopeStringLiteralTests {
    /// The scanner skips plain string bytes eight at a time; quotes, escapes and control characters at every offset
    /// around those words must still be found. Seeded random string literals, judged by JSONSerialization.
    @Test("seeded random string literals scan and unescape as JSONSerialization reads them")
    func randomStringLiterals() throws {
        var rng = SplitMix64(seed: 0xC0FFEE)
        let pieces = ["a", "bcdefgh", "é", "😀", #"\""#, #"\\"#, #"\n"#, #"\u00e9"#, #"\/"#, "\u{01}", "\"", "\\", " "]
        var agreed = 0
        for _ in 0..<3_000 {
            let length = Int(rng.next() % 24)
            let literal = (0..<length).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            let text = #"{"k":""# + literal + #"","n":1}"#
            let reference = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            let ours = try? withEnvelope(text) { envelope, bytes in envelope.string("k", in: bytes) }
            #expect((reference?["k"] as? String) == ours.flatMap { $0 }, "\(text)")
            if reference != nil { agreed += 1 }
        }
        #expect(agreed > 500, "too few valid literals to mean anything: \(agreed)")
    }
}
